package disruption

import (
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// floorAllows caps a pool's budget by its minNodes for the reasons that
// remove nodes (Empty, Underutilized): no more than the nodes above the
// floor may go, so consolidation never takes a pool below it. Drift
// replaces each node it takes, and is not capped; the provisioner replaces
// a floor node that leaves by any other way.
func floorAllows(pool *v1alpha1.NodePool, reason string, nodes, allowed int) int {
	if pool.FloorNodes() == 0 || reason != v1alpha1.DisruptionReasonEmpty && reason != v1alpha1.DisruptionReasonUnderutilized {
		return allowed
	}
	return min(allowed, max(nodes-pool.FloorNodes(), 0))
}
