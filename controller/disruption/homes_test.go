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
	h := disruption.NewHomes(clk, c, scheduler.Options{})
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
