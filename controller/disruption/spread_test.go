package disruption_test

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// Scenariogen's seed 18: the solver packs a candidate's large pod into the
// one hole that holds it and its small pods onto a fuller node, but
// kube-scheduler puts every pod on the node with the most room left, so the
// small pods, whatever order they come back in, fill that hole first and
// the large one waits for a new node. Such a deletion is not made; it is
// when the hole holds them all.
func TestConsolidationCountsOnRoomKubeSchedulerLeaves(t *testing.T) {
	keep := pool("keep", v1alpha1.Never, budget("100%", "", 0))
	for _, tc := range []struct {
		name     string
		roomyPod *corev1.Pod
		want     []string
	}{
		{name: "the small pods take the large one's hole", roomyPod: sized("held-b", "1", "14Gi")},
		{name: "the hole holds them all", roomyPod: sized("held-b", "1", "4Gi"), want: []string{"Underutilized[x]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			large := func(name, poolName string, pods ...*corev1.Pod) *scheduler.StateNode {
				return typedNode(name, poolName, "large", v1alpha1.CapacityTypeOnDemand, 0, pods...)
			}
			moving := []*corev1.Pod{sized("big", "3", "12Gi")}
			for _, name := range []string{"s1", "s2", "s3", "s4"} {
				moving = append(moving, sized(name, "250m", "2Gi"))
			}
			r := round(epoch, pools(onDemand("default"), keep), nil,
				large("a", "keep", sized("held-a", "5", "10Gi")), // room for the small pods only
				large("b", "keep", tc.roomyPod),                  // the one node the large pod fits on
				large("x", "default", moving...))
			if got := commanded(decide(t, singleNode, r)); !slices.Equal(got, tc.want) {
				t.Errorf("commands %q, want %q", got, tc.want)
			}
		})
	}
}
