package provisioningrequest

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// TestBoundInTrustsTheStatesBinding: a consumer the pod list still shows
// waiting but the state already has on a node counts as bound, so that the
// room is not counted short by it twice.
func TestBoundInTrustsTheStatesBinding(t *testing.T) {
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "training", Name: name}}
	}
	c := Consumers{Waiting: []*corev1.Pod{pod("a"), pod("b")}}
	snap := &scheduler.Snapshot{Nodes: []*scheduler.StateNode{{Node: &corev1.Node{}, Pods: []*corev1.Pod{pod("a")}}}}
	got := c.boundIn(snap)
	if len(got.Bound) != 1 || got.Bound[0].Name != "a" || len(got.Waiting) != 1 || got.Waiting[0].Name != "b" {
		t.Fatalf("bound %d, waiting %d; want a bound and b waiting", len(got.Bound), len(got.Waiting))
	}
}
