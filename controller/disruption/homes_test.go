package disruption_test

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stowage-dev/stowage/controller/disruption"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/state"
)

// Homes counts every draining node's pods together: two nodes deleted at
// once never both count on the same free room, and a node whose deletion
// the last answer did not know of is solved for at once.
func TestHomesShareTheFreeRoomBetweenDrains(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	c := state.NewCluster(clk)
	c.UpdateNodePool(pool("default", "0s"))
	add := func(sns ...*scheduler.StateNode) {
		for _, sn := range sns {
			c.UpdateNodeClaim(sn.NodeClaim)
			c.UpdateNode(sn.Node)
			for _, p := range sn.Pods {
				c.UpdatePod(p)
			}
		}
	}
	// "spare" has room for 3 CPUs; a and b each run 2.
	add(node("a", "default", 0, sized("a1", "1", "1Gi"), sized("a2", "1", "1Gi")),
		node("b", "default", 0, sized("b1", "1", "1Gi"), sized("b2", "1", "1Gi")),
		node("spare", "default", 0, sized("s1", "900m", "1Gi")))
	h := disruption.NewHomes(clk, c, nil, scheduler.Options{})
	c.MarkForDeletion("a")
	if !h.Ready(t.Context(), "a") {
		t.Fatal("a's pods fit on spare, yet a is not ready to drain")
	}
	c.MarkForDeletion("b") // within homesEvery of the last answer
	ready := map[string]bool{"a": h.Ready(t.Context(), "a"), "b": h.Ready(t.Context(), "b")}
	if ready["a"] == ready["b"] {
		t.Fatalf("ready to drain %v: spare holds one node's pods, not both", ready)
	}
	clk.Step(time.Minute)
	add(node("fresh", "default", 0))
	if !h.Ready(t.Context(), "a") || !h.Ready(t.Context(), "b") {
		t.Error("with a fresh node Ready, both drains have homes")
	}
}

// A pod with no Ready home holds its node while a pool can launch capacity
// for it, and not once none can: its pool was deleted (a destroyed
// configuration), so no replacement is coming.
func TestHomesHoldOnlyForCapacityThatCanCome(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	c := state.NewCluster(clk)
	np := pool("default", "0s")
	c.UpdateNodePool(np)
	sn := node("a", "default", 0, sized("a1", "1", "1Gi"))
	c.UpdateNodeClaim(sn.NodeClaim)
	c.UpdateNode(sn.Node)
	for _, p := range sn.Pods {
		c.UpdatePod(p)
	}
	h := disruption.NewHomes(clk, c, &typeList{its: catalogue()}, scheduler.Options{})
	c.MarkForDeletion("a")
	if h.Ready(t.Context(), "a") {
		t.Fatal("a's pod fits on no Ready node and its pool can launch one, yet a is ready to drain")
	}
	c.DeleteNodePool(np)
	clk.Step(time.Minute)
	if !h.Ready(t.Context(), "a") {
		t.Error("no pool can take a's pod any more, yet a still waits for its replacement")
	}
}

// The provisioner nominates a draining node's pods to their replacement,
// and the state counts them there: once the replacement is Ready, that room
// is theirs, not taken.
func TestHomesCountANominatedReplacementAsTheDrainingPodsHome(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	c := state.NewCluster(clk)
	c.UpdateNodePool(pool("default", "0s"))
	old := node("old", "default", 0, sized("w1", "1", "1Gi"), sized("w2", "1", "1Gi"))
	replacement := node("replacement", "default", 0)
	for _, sn := range []*scheduler.StateNode{old, replacement} {
		c.UpdateNodeClaim(sn.NodeClaim)
		c.UpdateNode(sn.Node)
		for _, p := range sn.Pods {
			c.UpdatePod(p)
		}
	}
	c.MarkForDeletion("old")
	for _, p := range old.Pods {
		c.Nominate(p, "replacement")
	}
	h := disruption.NewHomes(clk, c, &typeList{its: catalogue()}, scheduler.Options{})
	if !h.Ready(t.Context(), "old") {
		t.Fatal("the replacement the pods are nominated to is Ready with room for them, yet old is not ready to drain")
	}
}
