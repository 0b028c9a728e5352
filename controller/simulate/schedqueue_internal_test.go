package simulate

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// TestAPendingPodIsTriedOncePerItsBackoff: nodes registering every second do
// not make kube-scheduler try an unschedulable pod every second. Once a
// cluster event has moved it to the backoff queue, it is tried when its
// backoff (1 s, doubling per attempt, at most 10 s: KubeSchedulerConfiguration
// v1's podInitialBackoffSeconds and podMaxBackoffSeconds) has run out; with no
// event at all, after 5 minutes in the unschedulable pods.
func TestAPendingPodIsTriedOncePerItsBackoff(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	sp := &simPod{key: "default/web-0"}
	w := &world{clk: clk, pods: map[string]*simPod{sp.key: sp}, pendingList: []*simPod{sp}}
	var triedAt []time.Duration
	for range 56 { // the last event at 55 s, before the try then
		w.eventAt = clk.Now() // a node registers every second
		if len(w.dueForRetry()) == 1 {
			w.tried(sp)
			triedAt = append(triedAt, clk.Since(epoch))
		}
		clk.Step(time.Second)
	}
	// 0, then 1, 2, 4, 8 and 10 s after each try.
	want := []time.Duration{0, 1, 3, 7, 15, 25, 35, 45, 55}
	if len(triedAt) != len(want) {
		t.Fatalf("tried at %v, want %v (s)", triedAt, want)
	}
	for i := range want {
		if triedAt[i] != want[i]*time.Second {
			t.Fatalf("tried at %v, want %v (s)", triedAt, want)
		}
	}

	// No event after the last try: the pod waits 5 minutes from it.
	last := epoch.Add(triedAt[len(triedAt)-1])
	clk.SetTime(last.Add(5*time.Minute - time.Second))
	if due := w.dueForRetry(); len(due) != 0 {
		t.Fatalf("tried %s after its last try with no event since", clk.Since(last))
	}
	if w.nextRetry != last.Add(5*time.Minute) {
		t.Errorf("next try at %s after the last, want 5m0s", w.nextRetry.Sub(last))
	}
	clk.SetTime(last.Add(5 * time.Minute))
	if due := w.dueForRetry(); len(due) != 1 {
		t.Errorf("not tried 5 minutes after its last try")
	}
}

// TestOnlyANodeTurningUsableMovesThePendingPods: a node registering with
// Stowage's unregistered taint, or written again unchanged, or cordoned, is no
// event for the unschedulable pods (a try then would only restart their
// backoff a second before the node is usable); the taint's removal is.
func TestOnlyANodeTurningUsableMovesThePendingPods(t *testing.T) {
	w := &world{}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"},
		Spec:   corev1.NodeSpec{Taints: []corev1.Taint{v1alpha1.UnregisteredNoExecuteTaint}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	usable := node.DeepCopy()
	usable.Spec.Taints = nil
	cordoned := usable.DeepCopy()
	cordoned.Spec.Unschedulable = true
	for _, step := range []struct {
		what  string
		node  *corev1.Node
		gone  bool
		moves bool
	}{
		{"registered with the unregistered taint", node, false, false},
		{"its taint removed", usable, false, true},
		{"written again unchanged", usable, false, false},
		{"cordoned", cordoned, false, false},
		{"uncordoned", usable, false, true},
		{"deleted", usable, true, false},
	} {
		w.dirty = false
		w.nodeEvent(step.node, step.gone)
		if w.dirty != step.moves {
			t.Errorf("node %s: moves the pending pods %v, want %v", step.what, w.dirty, step.moves)
		}
	}
}
