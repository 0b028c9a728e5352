package scheduler

import (
	"fmt"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// fillFloors, under Options.FillFloors, opens an empty claim in each pool
// for every node its minNodes wants beyond the pool's nodes that stay and
// this decision's claims. Nodes leaving (marked for deletion, or their Node
// or NodeClaim being deleted: an interruption, a drift or an expiry) do not
// count, so the floor's nodes are replaced like any other. It runs after
// every pod is placed, so that the nodes pods need count towards the floor.
// A floor claim is the pool's cheapest type within its limits: a reservation
// the pool allows, when one has room, since reserved offerings cost nothing
// more.
func (sv *solver) fillFloors() {
	if !sv.opts.FillFloors {
		return
	}
	staying := stayingNodes(sv.snapshot.Nodes)
	for _, p := range sv.pools {
		for want := p.np.FloorNodes() - staying[p.name] - p.claims; want > 0; want-- {
			if !sv.openFloorClaim(p) {
				break
			}
		}
	}
}

// stayingNodes counts, per pool, the nodes and in-flight claims not leaving.
func stayingNodes(nodes []*StateNode) map[string]int {
	out := map[string]int{}
	for _, sn := range nodes {
		if sn.MarkedForDeletion || (sn.Node != nil && sn.Node.DeletionTimestamp != nil) ||
			(sn.NodeClaim != nil && sn.NodeClaim.DeletionTimestamp != nil) {
			continue
		}
		pool := ""
		switch {
		case sn.NodeClaim != nil:
			pool = sn.NodeClaim.Labels[v1alpha1.LabelNodePool]
		case sn.Node != nil:
			pool = sn.Node.Labels[v1alpha1.LabelNodePool]
		}
		if pool != "" {
			out[pool]++
		}
	}
	return out
}

// openFloorClaim opens one empty claim of the pool's cheapest type its
// limits allow; false when none does.
func (sv *solver) openFloorClaim(p *pool) bool {
	if len(p.types) == 0 {
		return false
	}
	j, _ := p.fitWithinLimits(p.types, 0, scheduling.Resources{}, scheduling.Resources{}, true)
	if j < 0 {
		return false
	}
	n := &node{index: -1, name: fmt.Sprintf("%s-%05d", p.name, p.claims+1), pool: p, reqs: p.reqs, taints: p.taints}
	n.setTypes(p.types)
	n.cur = j
	sv.addClaim(n)
	sv.reserve(n)
	sv.holdReservation(n)
	return true
}
