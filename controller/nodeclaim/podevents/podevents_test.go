package podevents_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
	"github.com/stowage-dev/stowage/controller/nodeclaim/nodeclaimtest"
	"github.com/stowage-dev/stowage/controller/nodeclaim/podevents"
	"github.com/stowage-dev/stowage/internal/testenv"
)

const settle = 20 * time.Second

func TestMain(m *testing.M) { nodeclaimtest.Main(m, testenv.Options{}) }

// TestPodEventsAreWrittenDedupedButEmptinessAlways: a pod binding writes
// the claim's lastPodEventTime; another 5 s later does not (the dedupe
// window); one 11 s after the first does; the last pods leaving 2 s later
// write at once, as the node is now empty.
func TestPodEventsAreWrittenDedupedButEmptinessAlways(t *testing.T) {
	e := nodeclaimtest.New(t)
	ctrl := podevents.New(e.Clock, e.Mgr.GetClient(), podevents.Options{})
	if err := ctrl.Register(e.Mgr); err != nil {
		t.Fatal(err)
	}
	e.Start()
	claim, node := registered(e)
	ns := e.Namespace()
	start := e.Clock.Now()

	first := e.Pod(ns, "first", node.Name)
	e.Create(first)
	e.Eventually(settle, lastEvent(e, claim, start))

	e.Clock.Step(5 * time.Second)
	second := e.Pod(ns, "second", node.Name)
	e.Create(second)
	reconcileOnceSeen(e, ctrl, node, 2)
	if err := lastEvent(e, claim, start)(); err != nil {
		t.Errorf("within the dedupe window: %v", err)
	}

	e.Clock.Step(6 * time.Second)
	third := e.Pod(ns, "third", node.Name)
	e.Create(third)
	e.Eventually(settle, lastEvent(e, claim, start.Add(11*time.Second)))

	e.Clock.Step(2 * time.Second)
	for _, p := range []*corev1.Pod{first, second, third} {
		e.Delete(p)
	}
	e.Eventually(settle, lastEvent(e, claim, start.Add(13*time.Second)))
}

// TestOnlyPodsThatNeedAHomeAreEvents: a DaemonSet's pod binding, or a pod
// that finished being deleted, is no event.
func TestOnlyPodsThatNeedAHomeAreEvents(t *testing.T) {
	bound := &corev1.Pod{Spec: corev1.PodSpec{NodeName: "n"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	done := bound.DeepCopy()
	done.Status.Phase = corev1.PodSucceeded
	daemon := bound.DeepCopy()
	yes := true
	daemon.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "agent", Controller: &yes}}
	for _, tc := range []struct {
		name         string
		old, updated *corev1.Pod
		want         bool
	}{
		{"a pod binds", &corev1.Pod{}, bound, true},
		{"a bound pod is created", nil, bound, true},
		{"a pod finishes", bound, done, true},
		{"a bound pod is deleted", bound, nil, true},
		{"a finished pod is deleted", done, nil, false},
		{"a DaemonSet's pod is created", nil, daemon, false},
		{"a bound pod's status changes", bound, bound.DeepCopy(), false},
	} {
		if got := podevents.Event(tc.old, tc.updated); got != tc.want {
			t.Errorf("%s: Event = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// registered creates a claim and its registered Node, and waits until the
// manager's cache pairs them.
func registered(e *nodeclaimtest.Env) (*v1alpha1.NodeClaim, *corev1.Node) {
	e.T.Helper()
	providerID := "aws:///us-east-1a/i-" + e.ID + "podevents"
	claim := e.NodeClaim("claim", nil)
	e.Create(claim)
	e.UpdateStatus(claim, func() { claim.Status.ProviderID = providerID })
	node := e.Node("node", providerID)
	e.Create(node)
	e.Eventually(settle, func() error {
		got, err := nodeclaim.ClaimForNode(e.Ctx, e.Mgr.GetClient(), node)
		if err == nil && got == nil {
			err = fmt.Errorf("the cache has no claim for %s yet", providerID)
		}
		return err
	})
	return claim, node
}

// lastEvent checks the claim's lastPodEventTime is at.
func lastEvent(e *nodeclaimtest.Env, claim *v1alpha1.NodeClaim, at time.Time) func() error {
	return func() error {
		if err := e.Get(claim); err != nil {
			return err
		}
		if got := claim.Status.LastPodEventTime.Time; !got.Equal(at.Truncate(time.Second)) {
			return fmt.Errorf("lastPodEventTime %s, want %s", got, at.Truncate(time.Second))
		}
		return nil
	}
}

// reconcileOnceSeen waits until the manager's cache holds n pods on the
// node, then reconciles the node, as the watch would.
func reconcileOnceSeen(e *nodeclaimtest.Env, ctrl *podevents.Controller, node *corev1.Node, n int) {
	e.T.Helper()
	e.Eventually(settle, func() error {
		list := &corev1.PodList{}
		if err := e.Mgr.GetClient().List(e.Ctx, list, client.MatchingFields{nodeclaim.PodNodeNameField: node.Name}); err != nil {
			return err
		}
		if len(list.Items) != n {
			return fmt.Errorf("the cache has %d pods on %s, want %d", len(list.Items), node.Name, n)
		}
		return nil
	})
	if _, err := ctrl.Reconcile(e.Ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(node)}); err != nil {
		e.T.Fatal(err)
	}
}
