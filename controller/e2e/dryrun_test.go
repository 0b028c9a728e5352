package e2e_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/testbed"
)

// TestDryRunDecidesAndLaunchesNothing runs `stowage run --dry-run` on the bed
// with pending pods: it resolves its NodeClass, decides, logs "would launch
// ...", counts the claims in its metric and tells each pod in an event, and
// creates no NodeClaim and makes no AWS call that changes the account (the
// emulator hears every call).
func TestDryRunDecidesAndLaunchesNothing(t *testing.T) {
	b := startBed(t, testbed.Options{})
	const dry = "dry"
	b.create(nodeClass(), nodePool(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: dry}})
	var mu sync.Mutex
	var actions []string
	b.Emulator.OnCall(func(c awsemu.Call) {
		mu.Lock()
		defer mu.Unlock()
		actions = append(actions, c.Action)
	})
	r := b.startReplica("replica-dry", replicaOptions{flags: []string{"--dry-run"}, releaseOnCancel: true})
	b.waitElected(r, 30*time.Second)
	b.create(deployment(dry, "web", 6, "1"))
	b.eventually(settle, func() error { return b.dryRunEvents(dry, "web", 6) })
	b.eventually(10*time.Second, func() error {
		if !strings.Contains(logs.String(), "dry run: would launch ") {
			return fmt.Errorf("no %q log line yet", "dry run: would launch")
		}
		return nil
	})
	b.eventually(settle, func() error { return b.nodeClassResolved("default") })
	if n := dryRunClaims(t); n == 0 {
		t.Error("stowage_provisioner_dry_run_nodeclaims_total counts no claim")
	}
	if claims, err := b.claims(); err != nil || len(claims) != 0 {
		t.Errorf("%d nodeclaims created in a dry run (%v): %s", len(claims), err, describe(claims))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(actions) == 0 {
		t.Fatal("the emulator heard no call: the dry run read nothing")
	}
	for _, a := range slices.Compact(slices.Sorted(slices.Values(actions))) {
		if !strings.HasPrefix(a, "Describe") && !strings.HasPrefix(a, "Get") && !strings.HasPrefix(a, "List") {
			t.Errorf("the dry run called %s, which changes the account", a)
		}
	}
	if pods, _ := b.pods(dry, "web"); slices.ContainsFunc(pods, func(p corev1.Pod) bool { return p.Spec.NodeName != "" }) {
		t.Error("a pod was bound: nothing should have been launched for it")
	}
}

// dryRunEvents checks that each of want pods of app has a DryRun event
// saying what would be launched for it.
func (b *bed) dryRunEvents(ns, app string, want int) error {
	pods, err := b.pods(ns, app)
	if err != nil || len(pods) != want {
		return fmt.Errorf("%d of %d pods (%v)", len(pods), want, err)
	}
	var list eventsv1.EventList
	if err := b.Admin.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		return err
	}
	told := map[string]bool{}
	for _, e := range list.Items {
		if e.Reason == "DryRun" && strings.Contains(e.Note, "Dry run: would launch a ") {
			told[e.Regarding.Name] = true
		}
	}
	for _, p := range pods {
		if !told[p.Name] {
			return fmt.Errorf("pod %s has no DryRun event", p.Name)
		}
	}
	return nil
}

// nodeClassResolved checks the NodeClass's status says Ready, resolved
// through the read-only clients.
func (b *bed) nodeClassResolved(name string) error {
	var nc v1alpha1.NodeClass
	if err := b.Admin.Get(context.Background(), client.ObjectKey{Name: name}, &nc); err != nil {
		return err
	}
	for _, c := range nc.Status.Conditions {
		if c.Type == "Ready" && c.Status == metav1.ConditionTrue && nc.Status.InstanceProfile != "" {
			return nil
		}
	}
	return fmt.Errorf("nodeclass %s is not resolved: %+v", name, nc.Status)
}

// dryRunClaims sums the dry run's claim counter.
func dryRunClaims(t *testing.T) float64 {
	t.Helper()
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() == "stowage_provisioner_dry_run_nodeclaims_total" {
			for _, m := range f.GetMetric() {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}
