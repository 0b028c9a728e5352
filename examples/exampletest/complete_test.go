package exampletest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/tfbed"
)

// TestCompleteExample applies examples/complete on the bed, the provider
// reaching it as an EKS cluster (a token STS verifies): both modules, with
// the 2 AM spike planned during the plan; plans no change after; runs the
// controller as the example deployed it (IRSA) until the storefront runs on
// web-spot's spot nodes; and destroys everything with those nodes running,
// leaving nothing in the emulator or the cluster.
func TestCompleteExample(t *testing.T) {
	e := tfbed.Shared(t)
	ctx := context.Background()
	before, err := e.Objects(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dir := layout(t, "complete")
	checkFormatAndValidate(t, e, "complete", dir)
	vars := tfbed.Flags(clusterVars(e))
	destroy := append([]string{"destroy", "-input=false", "-auto-approve"}, vars...)
	e.DestroyOnFailure(t, dir, destroy)
	plan := applyAndPlanClean(t, e, dir, vars, "data.stowage_plan.spike: Read complete", "Plan: 11 to add, 0 to change, 0 to destroy")
	if strings.Contains(plan, "Check block assertion failed") {
		t.Errorf("the spike does not fit the pools:\n%s", plan)
	}
	if cost := output[float64](t, e, dir, "spike_cost_per_hour"); cost <= 0 {
		t.Errorf("spike_cost_per_hour = %v", cost)
	}
	if pools := output[map[string][]string](t, e, dir, "node_pools"); fmt.Sprint(pools["web"]) != "[web-spot web-on-demand]" {
		t.Errorf("node_pools = %v", pools)
	}

	t.Run("the controller places the storefront on spot, and the destroy drains it", func(t *testing.T) {
		p, err := e.RunController(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if t.Failed() {
				t.Logf("the controller's log:\n%s", tfbed.LogTail(p, 40))
			}
			_ = p.Stop()
		}()
		w := tfbed.Workload{Namespace: "shop", Name: "storefront", Replicas: 4, NodeSelector: map[string]string{"tier": "web"},
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")}}
		if err := e.Run(ctx, w); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := e.Delete(ctx, w); err != nil {
				t.Error(err)
			}
		}()
		var nodes []corev1.Node
		tfbed.Eventually(t, 3*time.Minute, func() error {
			if err := p.Err(); err != nil {
				return err
			}
			nodes, err = e.Nodes(ctx, w)
			return err
		})
		for _, n := range nodes {
			if n.Labels[v1alpha1.LabelNodePool] != "web-spot" || n.Labels[v1alpha1.LabelCapacityType] != v1alpha1.CapacityTypeSpot {
				t.Errorf("storefront runs on %s, of pool %s and capacity type %s: spot is tried first", n.Name,
					n.Labels[v1alpha1.LabelNodePool], n.Labels[v1alpha1.LabelCapacityType])
			}
		}
		e.CLI.MustRun(t, dir, destroy...)
	})
	if !t.Failed() { // a failed test's leftovers are its cleanup's to destroy
		e.ExpectClean(t, before)
	}
}
