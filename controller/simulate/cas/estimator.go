package cas

import (
	"cmp"
	"slices"

	"github.com/stowage-dev/stowage/controller/scheduling"
)

// estimate is CA's binpacking estimator: it sorts pods by their share of a
// template node (CPU share plus memory share, largest first) and puts each on
// the first new node with room, opening a node when none has room and fewer
// than limit are open. It returns the nodes opened and the pods placed. Pods
// must already be allowed on g's template (labels and taints).
func estimate(g *NodeGroup, pods []*podInfo, limit int) (int, []*podInfo) {
	sorted := slices.Clone(pods)
	slices.SortStableFunc(sorted, func(a, b *podInfo) int {
		return cmp.Compare(share(b.requests, g.Allocatable), share(a.requests, g.Allocatable))
	})
	var nodes []scheduling.Resources
	var placed []*podInfo
	for _, p := range sorted {
		i := slices.IndexFunc(nodes, p.requests.Fits)
		if i < 0 {
			if len(nodes) >= limit || !p.requests.Fits(g.Allocatable) {
				continue
			}
			nodes = append(nodes, g.Allocatable)
			i = len(nodes) - 1
		}
		nodes[i] = nodes[i].Sub(p.requests)
		placed = append(placed, p)
	}
	return len(nodes), placed
}

// share is the estimator's pod score: the pod's fraction of the node's CPU
// plus its fraction of the node's memory.
func share(r, alloc scheduling.Resources) float64 {
	return float64(r.CPU)/float64(alloc.CPU) + float64(r.Memory)/float64(alloc.Memory)
}
