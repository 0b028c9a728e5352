package disruption

import (
	"slices"
	"time"

	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// markConsolidated records that consolidation found nothing on this layout
// of the fleet: it is not simulated again until pods move, nodes come or go,
// offerings change, a wait ends, or DefaultRevisit passes. Consolidation is
// the costly method; the cluster state changes with every pod status write.
func (c *Controller) markConsolidated(key uint64, wakes []time.Time, now time.Time) {
	c.consolidated.reset()
	c.consolidated.done(key, 0, now)
	for _, at := range wakes {
		c.consolidated.wake(at)
	}
}

// blockedByBudget reports whether a budget blocked a candidate: a budget
// window may open with time alone, so rounds go on while the cluster state
// stands still. Blocks that end at a known time wake the controller then;
// the others (PDBs, nominations, pods that fit nowhere) end only with a
// change of the state.
func blockedByBudget(d Decision) bool {
	return slices.ContainsFunc(d.Blocked, func(b Blocked) bool { return b.Kind == BlockedBudget })
}

func blockEnds(d Decision) []time.Time {
	var out []time.Time
	for _, b := range d.Blocked {
		out = append(out, b.Until)
	}
	return out
}

// consolidationHeld: no consolidation is decided while capacity is being
// added (a NodeClaim is launching, or pods wait for a node) or while another
// command launches replacements or its nodes still drain: removing capacity
// then is the churn pattern, two commands would count on the same free room,
// and pods would move twice in a row.
func (c *Controller) consolidationHeld(snap *scheduler.Snapshot) bool {
	why := heldBy(c.queue.holds(), c.cluster.Unprovided(), snap)
	if why != "" {
		c.log.Debug("consolidation held", "why", why)
	}
	return why != ""
}

// heldBy says what holds consolidation back, or "".
func heldBy(commandUnderWay, podsWait bool, snap *scheduler.Snapshot) string {
	switch {
	case commandUnderWay:
		return "a command launches replacements or drains"
	case podsWait:
		return "pods wait for capacity"
	}
	for _, sn := range snap.Nodes {
		if sn.NodeClaim != nil && sn.NodeClaim.DeletionTimestamp == nil && !initialized(sn) {
			return "nodeclaim " + sn.NodeClaim.Name + " is launching"
		}
		if !sn.MarkedForDeletion || sn.Node == nil {
			continue
		}
		for _, p := range sn.Pods {
			if scheduling.Reschedulable(p) && p.Spec.NodeName == sn.Node.Name {
				return "node " + sn.Node.Name + " is being removed and still runs pod " + p.Namespace + "/" + p.Name
			}
		}
	}
	return ""
}
