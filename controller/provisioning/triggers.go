package provisioning

import (
	"context"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/state"
)

// Triggers decides which cluster changes open a batch window. The
// controller's watches and the simulator's API server feed it the same
// changes, so that both provision on the same events:
//   - a pod kube-scheduler marks (or re-marks) Unschedulable and that no
//     live nomination covers;
//   - a NodePool created or changed: pods no pool could take may fit now;
//   - a NodeClaim being deleted or gone: its node's pods, and the pods
//     nominated to it, need capacity again (a claim deleted for a shortage,
//     for one, so that the next batch picks another offering or pool; a
//     node disrupted, whose pods count as pending from then on);
//   - a pod just bound (still Pending) while room is booked: it may have
//     taken a booking's room, which the next decision provides again (a
//     buffer's room is usually taken without a pod ever being unschedulable);
//   - a nomination lapsing (see state.NominationGrace): kube-scheduler did
//     not bind the pod where the plan said, and will not touch it again by
//     itself until the cluster changes.
//
// Lapses are checked when a Node or NodeClaim changes, after each batch, and
// at the next instant one is due.
type Triggers struct {
	cluster *state.Cluster
	batcher *Batcher
	clk     clock.Clock
	// wake carries one token when a check is due now.
	wake chan struct{}

	mu sync.Mutex
	// recheck says a Node or NodeClaim changed, or a batch ran, since the
	// last check.
	recheck bool
	// nextLapse is when the next nomination is due to lapse; zero when none.
	nextLapse time.Time
	// retry is when a batch should run again for pods it left
	// unschedulable (RetryAt); zero when none.
	retry time.Time
}

// NewTriggers returns the triggers of batcher, reading nominations from
// cluster and timing their lapses on clk.
func NewTriggers(clk clock.Clock, cluster *state.Cluster, batcher *Batcher) *Triggers {
	return &Triggers{cluster: cluster, batcher: batcher, clk: clk, wake: make(chan struct{}, 1)}
}

// Observe is told of every change to a Pod, NodePool, NodeClaim or Node;
// gone says the object was deleted.
func (t *Triggers) Observe(obj client.Object, gone bool) {
	switch o := obj.(type) {
	case *corev1.Pod:
		if !gone && (provisionable(o) && !t.cluster.IsNominated(o) || t.takesBookedRoom(o)) {
			t.batcher.Trigger()
		}
	case *v1alpha1.NodePool:
		if !gone {
			t.batcher.Trigger()
		}
	case *v1alpha1.NodeClaim:
		if gone || o.DeletionTimestamp != nil {
			t.batcher.Trigger()
		}
		t.markRecheck()
	case *corev1.Node:
		t.markRecheck()
	}
}

// takesBookedRoom reports whether a pod has just been bound, not by its
// DaemonSet, while some room is booked.
func (t *Triggers) takesBookedRoom(pod *corev1.Pod) bool {
	return pod.Spec.NodeName != "" && pod.Status.Phase == corev1.PodPending && !ownedByDaemonSet(pod) &&
		t.cluster.HasBookings()
}

// Provisioned is told that a batch ran: it may have nominated pods.
func (t *Triggers) Provisioned() { t.markRecheck() }

func (t *Triggers) markRecheck() {
	t.mu.Lock()
	t.recheck = true
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// Due is when CheckNominations should next run: now after a change, else
// when the next nomination lapses; zero when nothing is due.
func (t *Triggers) Due() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.recheck {
		return t.clk.Now()
	}
	if t.nextLapse.IsZero() || !t.retry.IsZero() && t.retry.Before(t.nextLapse) {
		return t.retry
	}
	return t.nextLapse
}

// CheckNominations lapses the nominations that are due and opens a batch
// window when a pod kube-scheduler found unschedulable lost its nomination.
func (t *Triggers) CheckNominations() {
	t.mu.Lock()
	t.recheck = false
	t.mu.Unlock()
	lapsed, next := t.cluster.LapseNominations()
	t.mu.Lock()
	t.nextLapse = next
	t.mu.Unlock()
	if slices.ContainsFunc(lapsed, provisionable) || t.retryDue() {
		t.batcher.Trigger()
	}
}

// Run checks nominations whenever Due says, on the clock, until ctx ends.
func (t *Triggers) Run(ctx context.Context) {
	for ctx.Err() == nil {
		due := t.Due()
		if !due.IsZero() && !due.After(t.clk.Now()) {
			t.CheckNominations()
			continue
		}
		t.wait(ctx, due)
	}
}

// wait returns at due (never, when zero), at the next change, or when ctx ends.
func (t *Triggers) wait(ctx context.Context, due time.Time) {
	var fire <-chan time.Time
	if !due.IsZero() {
		timer := t.clk.NewTimer(due.Sub(t.clk.Now()))
		defer timer.Stop()
		fire = timer.C()
	}
	select {
	case <-ctx.Done():
	case <-t.wake:
	case <-fire:
	}
}
