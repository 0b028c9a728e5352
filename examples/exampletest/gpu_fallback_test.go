package exampletest_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/tfbed"
)

// TestGPUFallbackExample applies examples/gpu-fallback, reads what its plans
// say the spike launches usually, with g5.12xlarge short and with every A10G
// short; then makes g5.12xlarge short in every zone of the emulator, runs the
// controller as the example deployed it, and sees vLLM run on the type the
// shortage plan named, after EC2 refused g5.12xlarge; and destroys
// everything, leaving nothing in the emulator or the cluster.
func TestGPUFallbackExample(t *testing.T) {
	e := tfbed.Shared(t)
	ctx := context.Background()
	before, err := e.Objects(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dir := layout(t, "gpu-fallback")
	checkFormatAndValidate(t, e, "gpu-fallback", dir)
	vars := tfbed.Flags(clusterVars(e))
	destroy := append([]string{"destroy", "-input=false", "-auto-approve"}, vars...)
	e.DestroyOnFailure(t, dir, destroy)
	plan := applyAndPlanClean(t, e, dir, vars, "data.stowage_plan.g5_12xlarge_short: Read complete")
	if strings.Contains(plan, "Check block assertion failed") {
		t.Errorf("the spike does not survive the shortage:\n%s", plan)
	}
	usual, fallback := output[[]string](t, e, dir, "usual_instance_types"), output[[]string](t, e, dir, "fallback_instance_types")
	lastResort := output[[]string](t, e, dir, "last_resort_instance_types")
	t.Logf("the spike launches %v usually, %v with g5.12xlarge short, %v with every A10G short", usual, fallback, lastResort)
	if !slices.Equal(usual, []string{"g5.12xlarge"}) || !slices.Equal(fallback, []string{"g5.24xlarge"}) || !slices.Equal(lastResort, []string{"g6.12xlarge"}) {
		t.Errorf("the plans launch %v, %v and %v; want g5.12xlarge, then g5.24xlarge, then g6.12xlarge", usual, fallback, lastResort)
	}
	if got := output[[]string](t, e, dir, "launchable_instance_types"); !slices.Equal(got, []string{"g5.12xlarge", "g5.24xlarge", "g6.12xlarge"}) {
		t.Errorf("the controller's policy launches %v, want the pools' three types", got)
	}

	var short []awsemu.PoolKey
	for _, z := range e.Bed.Emulator.Zones() {
		short = append(short, awsemu.PoolKey{InstanceType: "g5.12xlarge", Zone: z.Name, CapacityType: awsemu.CapacityOnDemand})
	}
	e.Bed.Emulator.SetShortage(true, short...)
	defer e.Bed.Emulator.SetShortage(false, short...)
	t.Run("with g5.12xlarge short, vLLM runs on the fallback the plan named", func(t *testing.T) {
		// The destroy runs while the controller does, which drains the pools' nodes.
		runsOnFallback(t, e, fallback[0], func() { e.CLI.MustRun(t, dir, destroy...) })
	})
	if !t.Failed() { // a failed test's leftovers are its cleanup's to destroy
		e.ExpectClean(t, before)
	}
}

// runsOnFallback runs two vLLM replicas of four GPUs each and wants them on
// nodes of the fallback type, launched after EC2 refused g5.12xlarge; then,
// with the controller still running, it calls then.
func runsOnFallback(t *testing.T, e *tfbed.Env, fallback string, then func()) {
	ctx := context.Background()
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
	w := tfbed.Workload{Namespace: "inference", Name: "vllm", Replicas: 2, NodeSelector: map[string]string{"tier": "inference"},
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("64Gi"),
			"nvidia.com/gpu": resource.MustParse("4")},
		Limits:      corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("4")},
		Tolerations: []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}}
	seen := len(e.Fleets()) // those of the package's earlier tests
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
		if got := n.Labels[corev1.LabelInstanceTypeStable]; got != fallback || n.Labels[v1alpha1.LabelNodePool] != "gpu-inference" {
			t.Errorf("vLLM runs on %s, a %s of pool %s; want %s of gpu-inference", n.Name, got, n.Labels[v1alpha1.LabelNodePool], fallback)
		}
	}
	refused, launched := 0, 0
	fleets := e.Fleets()[seen:]
	for _, f := range fleets {
		for _, fe := range f.Errors {
			if fe.InstanceType == "g5.12xlarge" && fe.Code == "InsufficientInstanceCapacity" {
				refused++
			}
		}
		for _, typ := range f.Launched {
			if typ != fallback {
				t.Errorf("a fleet launched a %s", typ)
			}
			launched++
		}
	}
	if refused == 0 {
		t.Errorf("EC2 never refused g5.12xlarge: the controller did not try it, so nothing fell back (fleets %+v)", fleets)
	}
	t.Logf("EC2 refused g5.12xlarge %d times; %d instances launched on %s", refused, launched, fallback)
	then()
}
