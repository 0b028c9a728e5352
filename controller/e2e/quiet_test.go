package e2e_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/testbed"
)

// quietFor is the pool's consolidateAfter in TestConsolidateAfterOutlivesAFailover.
const quietFor = 60 * time.Second

// TestConsolidateAfterOutlivesAFailover: a node emptied 10 s before its
// leader crashes is not consolidated by the replica that takes over before
// consolidateAfter has passed since its pod left. That replica started after
// the pod left, so its cluster state has no pod event for the node (it falls
// back to the node's initialization); the claim's status.lastPodEventTime,
// which the pod events controller wrote when the pod left, carries the time
// across. The node is then consolidated. The node runs its pod for
// consolidateAfter first, so that its initialization holds nothing back.
func TestConsolidateAfterOutlivesAFailover(t *testing.T) {
	b := startBed(t, testbed.Options{})
	pool := nodePool()
	pool.Spec.Disruption = v1alpha1.Disruption{ConsolidationPolicy: v1alpha1.ConsolidationPolicyWhenEmpty,
		ConsolidateAfter: ptr.To(v1alpha1.MustParseDuration(quietFor.String()))}
	b.create(nodeClass(), pool)
	leader := b.startReplica("quiet-leader", replicaOptions{})
	b.waitElected(leader, 30*time.Second)
	const ns = "quiet"
	b.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, deployment(ns, "web", 1, "500m"))
	b.eventually(settle, b.running(ns, "web", 1))
	b.eventually(settle, func() error { return b.claimsReady() })
	claims, err := b.claims()
	if err != nil || len(claims) != 1 {
		t.Fatalf("claims %d (%v), want the web pod's one", len(claims), err)
	}
	claim := &claims[0]
	// The node must have been up for consolidateAfter already, so that only
	// the pod's leaving can hold its consolidation back.
	b.eventually(quietFor+settle, func() error {
		cond := meta.FindStatusCondition(claim.Status.Conditions, v1alpha1.ConditionInitialized)
		if cond == nil || time.Since(cond.LastTransitionTime.Time) < quietFor {
			return fmt.Errorf("nodeclaim %s initialized %v", claim.Name, cond)
		}
		return nil
	})

	watch := b.watchClaims(t)
	scaled := time.Now()
	b.scale(ns, "web", 0)
	b.eventually(settle, func() error {
		pods, err := b.pods(ns, "web")
		if err == nil && len(pods) > 0 {
			err = fmt.Errorf("%d web pods are left", len(pods))
		}
		return err
	})
	left := time.Now()
	b.eventually(20*time.Second, func() error { // the pod events controller writes the claim's time
		if err := b.Admin.Get(context.Background(), client.ObjectKeyFromObject(claim), claim); err != nil {
			return err
		}
		if t := claim.Status.LastPodEventTime.Time; t.Before(scaled.Truncate(time.Second)) {
			return fmt.Errorf("lastPodEventTime %s is from before the scale-in at %s", t, scaled)
		}
		return nil
	})
	// The standby starts now that the pod is gone, as the Deployment's next
	// pod would: its informers never saw the pod.
	standby := b.startReplica("quiet-standby", replicaOptions{releaseOnCancel: true})
	b.waitSynced(standby)
	b.eventually(20*time.Second, func() error { // the node stays 10 s empty under its leader
		if d := time.Since(left); d < 10*time.Second {
			return fmt.Errorf("the node has been empty for %s", d.Round(time.Second))
		}
		return nil
	})
	if err := leader.stop(); err != nil {
		t.Fatal(err)
	}
	waitLeading(b, standby, settle)
	deleted := b.consolidatedAt(watch, claim.Name)
	t.Logf("pod left at %s, lastPodEventTime %s, leader killed 10 s later, claim deleted %s after the pod left",
		left.Format(time.RFC3339), claim.Status.LastPodEventTime.Format(time.RFC3339), deleted.Sub(left).Round(time.Second))
	if early := claim.Status.LastPodEventTime.Add(quietFor); deleted.Before(early) {
		t.Errorf("the new leader consolidated the node at %s, before consolidateAfter (%s) had passed since its pod left (%s)",
			deleted.Format(time.RFC3339), quietFor, early.Format(time.RFC3339))
	}
}

// consolidatedAt waits until the watch has seen the claim being deleted and
// returns when it did.
func (b *bed) consolidatedAt(watch *claimWatch, name string) time.Time {
	b.t.Helper()
	var at time.Time
	b.eventually(quietFor+settle, func() error {
		watch.mu.Lock()
		defer watch.mu.Unlock()
		var ok bool
		if at, ok = watch.deleted[name]; !ok {
			return fmt.Errorf("nodeclaim %s is not being deleted", name)
		}
		return nil
	})
	return at
}
