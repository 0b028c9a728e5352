package garbagecollection_test

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/nodeclaim/garbagecollection"
	"github.com/stowage-dev/stowage/controller/nodeclaim/nodeclaimtest"
)

const settle = 20 * time.Second

// TestOrphanedInstancesAreDeleted: of the cloud's instances, those no claim
// owns are deleted once older than the grace period, through their Node when
// one registered; instances a claim names, or that a claim still launching
// was created for, are kept.
func TestOrphanedInstancesAreDeleted(t *testing.T) {
	e := nodeclaimtest.New(t)
	grace, interval := time.Minute, 2*time.Minute
	old := e.Clock.Now().Add(-2 * grace)

	owned := launch(t, e, "owned", old)
	claim := e.NodeClaim("owned", nil)
	e.Create(claim)
	e.UpdateStatus(claim, func() { claim.Status.ProviderID = owned })
	launching := launch(t, e, "launching", old)
	e.Create(e.NodeClaim("launching", nil))
	orphan := launch(t, e, "orphan", old)
	young := launch(t, e, "young", e.Clock.Now())
	withNode := launch(t, e, "with-node", old)
	node := e.Node("with-node", withNode)
	e.Create(node)
	collectedInstances := nodeclaimtest.CounterValue(t, garbagecollection.Collected.WithLabelValues(garbagecollection.ViaInstance))
	collectedNodes := nodeclaimtest.CounterValue(t, garbagecollection.Collected.WithLabelValues(garbagecollection.ViaNode))

	gc := garbagecollection.New(e.Clock, e.Mgr.GetClient(), e.Cloud, garbagecollection.Options{Interval: interval, GracePeriod: grace})
	if err := gc.Register(e.Mgr); err != nil {
		t.Fatalf("registering the controller: %v", err)
	}
	e.Start()

	// The first pass runs at start.
	e.Eventually(settle, func() error { return terminated(e, orphan) })
	e.Eventually(settle, func() error { return e.Gone(node) })
	expectLive(t, e, owned, launching, young, withNode)

	// The next pass runs an interval later, on the injected clock: the young
	// instance is now past its grace period, and the one whose Node was
	// deleted (no termination controller runs here) has no Node any more.
	e.Eventually(settle, func() error {
		if !e.Clock.HasWaiters() {
			return fmt.Errorf("the next pass is not scheduled on the fake clock")
		}
		return nil
	})
	e.Clock.Step(interval)
	e.Eventually(settle, func() error { return terminated(e, young) })
	e.Eventually(settle, func() error { return terminated(e, withNode) })
	expectLive(t, e, owned, launching)

	e.ExpectCounter("garbage_collected_total{via=instance}",
		garbagecollection.Collected.WithLabelValues(garbagecollection.ViaInstance), collectedInstances, 3)
	e.ExpectCounter("garbage_collected_total{via=node}",
		garbagecollection.Collected.WithLabelValues(garbagecollection.ViaNode), collectedNodes, 1)
}

// launch starts an instance for a claim named name (which the cluster may
// never see), launched at launchedAt, and returns its provider id.
func launch(t *testing.T, e *nodeclaimtest.Env, name string, launchedAt time.Time) string {
	t.Helper()
	claim := e.NodeClaim(name, nil)
	claim.CreationTimestamp = metav1.NewTime(launchedAt)
	created, err := e.Cloud.Create(e.Ctx, claim)
	if err != nil {
		t.Fatalf("launching %s: %v", name, err)
	}
	return created.Status.ProviderID
}

func terminated(e *nodeclaimtest.Env, providerID string) error {
	if e.Cloud.Live(e.Ctx, providerID) {
		return fmt.Errorf("instance %s is still running", providerID)
	}
	return nil
}

func expectLive(t *testing.T, e *nodeclaimtest.Env, providerIDs ...string) {
	t.Helper()
	for _, id := range providerIDs {
		if !e.Cloud.Live(e.Ctx, id) {
			t.Errorf("instance %s was terminated, want it kept", id)
		}
	}
}
