package scheduler_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

func withPriority(v int32) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.Priority = ptr.To(v) }
}

func withPriorityClass(name string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.PriorityClassName = name }
}

// placedOn lists the pods the decision put on existing nodes, by name.
func placedOn(r *scheduler.Results) []string {
	var out []string
	for _, pl := range r.Existing {
		out = append(out, pl.Pod.Name)
	}
	return out
}

// TestRoomForOneGoesToTheHighestPriority: one existing node with room for one
// pod and no pool to buy more. The pods are alike but for their priority,
// and the lowest sorts first by name (the order before priorities): the room
// goes to the highest, whether its priority is spec.priority or its
// PriorityClass's value, and a pod with neither counts as 0.
func TestRoomForOneGoesToTheHighestPriority(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pods  []*corev1.Pod
		want  string
		class map[string]int32
	}{
		{"spec.priority", append(pods(1, "a-low", "3", "1Gi", withPriority(-5)), pods(1, "b-high", "3", "1Gi", withPriority(100))...), "b-high-000", nil},
		{"priorityClassName", append(pods(1, "a-none", "3", "1Gi"), pods(1, "b-critical", "3", "1Gi", withPriorityClass("critical"))...),
			"b-critical-000", map[string]int32{"critical": 1000}},
		{"spec.priority over the class", append(pods(1, "a-set", "3", "1Gi", withPriorityClass("critical"), withPriority(1)),
			pods(1, "b-class", "3", "1Gi", withPriorityClass("critical"))...), "b-class-000", map[string]int32{"critical": 1000}},
		{"negative below none", append(pods(1, "a-filler", "3", "1Gi", withPriority(-1)), pods(1, "b-none", "3", "1Gi")...), "b-none-000", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := snapshot(tc.pods)
			s.Nodes = []*scheduler.StateNode{existingNode("node-a", "us-east-1a", "4")}
			s.PriorityClasses = tc.class
			r := solve(t, s, scheduler.Options{})
			if got := placedOn(r); len(got) != 1 || got[0] != tc.want {
				t.Fatalf("placed %v on the node, want [%s]", got, tc.want)
			}
			if len(r.Unschedulable) != 1 {
				t.Errorf("%d pods unschedulable, want the other one", len(r.Unschedulable))
			}
		})
	}
}

// TestBoundPlacesTheHighestPrioritiesFirst: a bound of 4 pods over 3
// priorities of 3 pods each places the 3 highest and 1 of the middle, and
// leaves the other 5 waiting, with the bound as their reason; the lowest
// priority's pods sort first by name and are larger (the order before
// priorities would have tried them first).
func TestBoundPlacesTheHighestPrioritiesFirst(t *testing.T) {
	all := append(append(pods(3, "a-low", "2", "2Gi", withPriority(0)), pods(3, "b-mid", "1", "1Gi", withPriority(500))...),
		pods(3, "c-high", "1", "1Gi", withPriority(1000))...)
	r := solve(t, snapshot(all, pool("default")), scheduler.Options{Bound: scheduler.PodBudget(4)})
	placed := map[string]int{}
	for _, nc := range r.NewNodeClaims {
		for _, p := range nc.Pods {
			placed[p.Name[:strings.Index(p.Name, "-0")]]++
		}
	}
	if placed["c-high"] != 3 || placed["b-mid"] != 1 || placed["a-low"] != 0 {
		t.Errorf("placed %v, want all 3 of c-high and 1 of b-mid", placed)
	}
	if len(r.Waiting) != 5 || len(r.Unschedulable) != 0 {
		t.Fatalf("%d waiting and %d unschedulable, want 5 and 0", len(r.Waiting), len(r.Unschedulable))
	}
	for _, w := range r.Waiting {
		if !strings.Contains(w.Reason, "time bound after 4 pods") {
			t.Errorf("%s waits for %q, want the bound's reason", w.Pod.Name, w.Reason)
		}
	}
	if unbounded := solve(t, snapshot(all, pool("default")), scheduler.Options{}); len(unbounded.Waiting) != 0 || unbounded.PodCount() != 9 {
		t.Errorf("without a bound %d pods wait and %d are placed, want 0 and 9", len(unbounded.Waiting), unbounded.PodCount())
	}
}

// TestMinPodPriorityBuysNothingForFillers: a pool whose minPodPriority is
// above a pod's launches nothing for it, not even room on a claim it opens
// for others, though the pod takes the room an existing node has; a pod at
// the minimum gets a new node.
func TestMinPodPriorityBuysNothingForFillers(t *testing.T) {
	minimum := func(np *v1alpha1.NodePool) { np.Spec.MinPodPriority = ptr.To[int32](0) }
	for _, tc := range []struct {
		name                     string
		web                      int
		onNode, claimed, refused int
	}{
		{"fillers alone take the node's room", 0, 2, 0, 1},
		{"web first, then nothing new for fillers", 3, 2, 1, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := snapshot(append(pods(3, "filler", "3", "1Gi", withPriority(-10)), pods(tc.web, "web", "3", "1Gi")...), pool("default", minimum))
			s.Nodes = []*scheduler.StateNode{existingNode("node-a", "us-east-1a", "8")}
			r := solve(t, s, scheduler.Options{})
			claimed := 0
			for _, nc := range r.NewNodeClaims {
				for _, p := range nc.Pods {
					if !strings.HasPrefix(p.Name, "web") {
						t.Errorf("new claim %s holds %s", nc.Name, p.Name)
					}
					claimed++
				}
			}
			if len(placedOn(r)) != tc.onNode || claimed != tc.claimed || len(r.Unschedulable) != tc.refused {
				t.Fatalf("%d on the node, %d on new claims, %d unschedulable; want %d, %d, %d",
					len(placedOn(r)), claimed, len(r.Unschedulable), tc.onNode, tc.claimed, tc.refused)
			}
			for _, u := range r.Unschedulable {
				if !strings.Contains(u.Reason, "priority -10 is below the pool's minPodPriority 0") {
					t.Errorf("%s: reason %q does not say the pool's minimum keeps it out", u.Pod.Name, u.Reason)
				}
			}
		})
	}
}
