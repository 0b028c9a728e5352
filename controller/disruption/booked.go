package disruption

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// BookedRoom puts each booking's virtual pods (a CapacityBuffer's
// chunks) on the nodes whose room they take now, as pods bound there: a
// node that holds a buffer's room is then not empty, and a consolidation
// must find its virtual pods a home, on the other nodes or its
// replacement, as it must for real pods. Virtual pods with no room now are
// left out: the provisioner launches theirs. They never block a node
// (do-not-disrupt, PDBs) and are never evicted.
func BookedRoom(snap *scheduler.Snapshot, bookings []scheduler.Booking, opts scheduler.Options) *scheduler.Snapshot {
	if len(bookings) == 0 {
		return snap
	}
	placing := *snap
	placing.Pods, placing.Bookings, placing.InstanceTypes = nil, bookings, nil
	byNode := map[string][]*corev1.Pod{}
	for _, pl := range scheduler.Solve(&placing, opts).Existing {
		bound := *pl.Pod
		bound.Spec.NodeName, bound.Status.Phase = pl.Node, corev1.PodRunning
		byNode[pl.Node] = append(byNode[pl.Node], &bound)
	}
	out := *snap
	out.Nodes = make([]*scheduler.StateNode, len(snap.Nodes))
	for i, sn := range snap.Nodes {
		out.Nodes[i] = sn
		if pods := byNode[sn.Name()]; len(pods) > 0 {
			holding := *sn
			holding.Pods = append(slices.Clone(sn.Pods), pods...)
			out.Nodes[i] = &holding
		}
	}
	return &out
}
