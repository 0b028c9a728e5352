package disruption

import (
	"cmp"
	"container/heap"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/stowage-dev/stowage/controller/scheduling"
)

// The solver packs the largest pods first onto the first nodes that take
// them; kube-scheduler binds pending pods in its queue's order, each to the
// node that passes its filters with the most room left (the default
// profile's NodeResourcesFit score, LeastAllocated). A deletion whose pods
// fit only as the solver packs them can leave a pod homeless: the small pods,
// spread over the emptiest nodes, take the room the solver kept for a large
// one, which then waits for a new node (scenariogen's seed 18).

// spreadHomeless returns the pods of a simulation without new capacity that
// find no node when kube-scheduler places them on the nodes that receive
// pods, other than those the simulation took away, smallest first or
// largest first (which comes back first is up to their controllers): with
// either order, some pod is left without room. Pods with a hard inter-pod
// constraint (required pod affinity or anti-affinity, a DoNotSchedule
// spread, host ports) are placed where the solver put them, as
// kube-scheduler applies the same predicates; the others are spread, their
// soft preferences left aside.
func spreadHomeless(r *Round, sim simulation) []*corev1.Pod {
	nodes, index := spreadNodes(r, sim.gone)
	var pods []*corev1.Pod
	for _, pl := range sim.results.Existing {
		if !hardlyPlaced(pl.Pod) {
			pods = append(pods, pl.Pod)
			continue
		}
		if i, ok := index[pl.Node]; ok {
			nodes[i].free = nodes[i].free.Sub(r.requestsOf(pl.Pod))
		}
	}
	slices.SortStableFunc(pods, func(a, b *corev1.Pod) int {
		ra, rb := r.requestsOf(a), r.requestsOf(b)
		return cmp.Or(cmp.Compare(ra.CPU, rb.CPU), cmp.Compare(ra.Memory, rb.Memory))
	})
	if out := leastAllocatedHomeless(r, pods, slices.Clone(nodes)); len(out) > 0 {
		return out
	}
	slices.Reverse(pods)
	return leastAllocatedHomeless(r, pods, nodes)
}

// spreadNode is a receiver as kube-scheduler scores it.
type spreadNode struct {
	node        *corev1.Node
	alloc, free scheduling.Resources
	// index is its position in the order nodes are tried
	index int
}

// score is the node's LeastAllocated score before a pod is added: the mean
// free share of its CPU and memory. kube-scheduler scores the node with the
// pod added, which ranks nodes of different sizes a little differently by
// the pod's share of each; ranking by the room left keeps the placement of
// many pods to a heap's cost.
func (n *spreadNode) score() float64 {
	share := func(f, a int64) float64 {
		if a <= 0 {
			return 0
		}
		return float64(f) / float64(a)
	}
	return (share(n.free.CPU, n.alloc.CPU) + share(n.free.Memory, n.alloc.Memory)) / 2
}

// roomiest orders nodes most room left first, then in snapshot order.
type roomiest []*spreadNode

func (h roomiest) Len() int { return len(h) }
func (h roomiest) Less(i, j int) bool {
	si, sj := h[i].score(), h[j].score()
	return si > sj || si == sj && h[i].index < h[j].index
}
func (h roomiest) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *roomiest) Push(x any)   { *h = append(*h, x.(*spreadNode)) }
func (h *roomiest) Pop() any {
	old := *h
	n := old[len(old)-1]
	*h = old[:len(old)-1]
	return n
}

// spreadNodes are the nodes that receive pods, other than gone, with their
// free room, and node name -> position.
func spreadNodes(r *Round, gone map[string]bool) ([]spreadNode, map[string]int) {
	var nodes []spreadNode
	index := map[string]int{}
	for _, sn := range r.Snapshot.Nodes {
		if sn.MarkedForDeletion || r.Busy[sn.Name()] || gone[sn.Name()] || !receives(sn) {
			continue
		}
		index[sn.Name()] = len(nodes)
		nodes = append(nodes, spreadNode{node: sn.Node, alloc: scheduling.FromList(sn.Node.Status.Allocatable), free: r.nodeFree(sn),
			index: len(nodes)})
	}
	return nodes, index
}

// hardlyPlaced reports whether kube-scheduler's choice for the pod depends
// on other pods beyond their requests.
func hardlyPlaced(p *corev1.Pod) bool {
	if a := p.Spec.Affinity; a != nil && (a.PodAffinity != nil && len(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0 ||
		a.PodAntiAffinity != nil && len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0) {
		return true
	}
	return len(scheduling.PodHostPorts(p)) > 0 || slices.ContainsFunc(p.Spec.TopologySpreadConstraints,
		func(c corev1.TopologySpreadConstraint) bool { return c.WhenUnsatisfiable == corev1.DoNotSchedule })
}

// leastAllocatedHomeless places the pods in order, each on the node with
// the most room left that passes kube-scheduler's filters (resources,
// taints, required node affinity), and returns those that fit nowhere.
func leastAllocatedHomeless(r *Round, pods []*corev1.Pod, nodes []spreadNode) []*corev1.Pod {
	h := make(roomiest, len(nodes))
	for i := range nodes {
		h[i] = &nodes[i]
	}
	heap.Init(&h)
	var homeless []*corev1.Pod
	var passed []*spreadNode
	for _, p := range pods {
		req := r.requestsOf(p)
		affinity := nodeaffinity.GetRequiredNodeAffinity(p)
		passed = passed[:0]
		var chosen *spreadNode
		for h.Len() > 0 && chosen == nil {
			n := heap.Pop(&h).(*spreadNode)
			passed = append(passed, n)
			if !req.Fits(n.free) || scheduling.Tolerates(n.node.Spec.Taints, p.Spec.Tolerations) != nil {
				continue
			}
			if ok, _ := affinity.Match(n.node); ok {
				chosen = n
			}
		}
		if chosen == nil {
			homeless = append(homeless, p)
		} else {
			chosen.free = chosen.free.Sub(req)
		}
		for _, n := range passed {
			heap.Push(&h, n)
		}
	}
	return homeless
}
