package disruption_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/disruption"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// TestAFloorIsNeverConsolidated: four empty nodes in a pool with minNodes
// 3 and a budget that would let them all go: emptiness deletes one, the
// one above the floor; drift is not capped.
func TestAFloorIsNeverConsolidated(t *testing.T) {
	np := pool("default", "0s", budget("100%", "", 0))
	np.Spec.MinNodes = ptr.To[int32](3)
	r := round(epoch, []*v1alpha1.NodePool{np}, nil, nodes(4, "default")...)
	d := decide(t, emptiness, r)
	if got := commanded(d); len(got) != 1 || len(d.Commands[0].Candidates) != 1 {
		t.Fatalf("emptiness commands %v, want one node deleted, the one above the floor", got)
	}
	if d.Budgets["default"] != 1 {
		t.Fatalf("the Empty budget is %d, want 1: the nodes above the floor", d.Budgets["default"])
	}
	budgets, err := disruption.NewBudgets(r.Snapshot.Nodes, r.Pools, epoch, v1alpha1.DisruptionReasonDrifted, nil)
	fatalIf(t, err)
	if budgets["default"] != 4 {
		t.Fatalf("the Drifted budget is %d, want all 4: drift replaces what it takes", budgets["default"])
	}
}

// TestBookedRoomKeepsANode: an empty large node holds the room a booking
// asks for; emptiness leaves it, and consolidation replaces it with the
// cheapest node that holds the virtual pod, a medium one. Without the
// booking it is empty.
func TestBookedRoomKeepsANode(t *testing.T) {
	np := pool("default", "0s", budget("100%", "", 0))
	chunk := sized("chunk", "3", "4Gi")
	owner := scheduler.BookingOwner{Kind: "CapacityBuffer", Namespace: "default", Name: "web"}
	bookings := []scheduler.Booking{{Owner: owner, Pods: scheduler.VirtualPods(owner, corev1.PodTemplateSpec{ObjectMeta: chunk.ObjectMeta, Spec: chunk.Spec}, 1)}}

	large := func() *scheduler.StateNode {
		return typedNode("a", "default", "large", v1alpha1.CapacityTypeOnDemand, 0)
	}
	r := round(epoch, []*v1alpha1.NodePool{np}, nil, large())
	if got := commanded(decide(t, emptiness, r)); len(got) != 1 {
		t.Fatalf("without the booking, emptiness commands %v, want the node deleted", got)
	}
	r = round(epoch, []*v1alpha1.NodePool{np}, nil, large())
	r.Snapshot = disruption.BookedRoom(r.Snapshot, bookings, scheduler.Options{})
	if got := commanded(decide(t, emptiness, r)); len(got) != 0 {
		t.Fatalf("with the node's room booked, emptiness commands %v, want none", got)
	}
	if got := commanded(decide(t, singleNode, r)); len(got) != 1 || got[0] != "Underutilized[a]+medium" {
		t.Fatalf("consolidation commands %v, want the large node replaced by a medium one holding the 3-CPU chunk", got)
	}
}

var emptiness = disruption.NewEmptiness()
