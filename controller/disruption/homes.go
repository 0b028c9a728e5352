package disruption

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/scheduling"
	"github.com/stowage-dev/stowage/controller/state"
)

// homesEvery bounds how often Homes solves again while the cluster state
// keeps changing.
const homesEvery = 2 * time.Second

// Homes answers the termination controller's question "do the pods of this
// draining node have somewhere Ready to go?", so that a node is drained only
// once its replacement capacity is up: replacement before eviction, for
// disruption, expiry, interruptions and deletions alike. It solves, with the
// provisioner's scheduling core, for the pods of every node marked for
// deletion at once (so that two draining nodes do not both count on the same
// free room), onto the nodes that are Ready and initialized; new capacity
// still launching counts only once it is Ready. A pod no pool can launch
// capacity for either (its pool was deleted, or no pool tolerates it) holds
// nothing: no replacement is coming for it.
type Homes struct {
	clk     clock.PassiveClock
	cluster *state.Cluster
	types   InstanceTypes
	solve   scheduler.Options

	mu sync.Mutex
	// gen and at are the cluster generation and instant of the last solve.
	gen uint64
	at  time.Time
	// homeless names the draining nodes with a pod that fits nowhere Ready;
	// draining all the nodes the last solve drained.
	homeless, draining map[string]bool
	solved             bool
	// requests remembers pods' requests from solve to solve.
	requests *podRequests
}

// NewHomes returns Homes over the cluster state, solving with solve (the
// provisioner's options) and the pools' instance types from types; with nil
// types every pod without a Ready home holds its node.
func NewHomes(clk clock.PassiveClock, cluster *state.Cluster, types InstanceTypes, solve scheduler.Options) *Homes {
	return &Homes{clk: clk, cluster: cluster, types: types, solve: solve}
}

// Ready reports whether every pod on the node that would need a new home
// fits on a Ready node, all draining nodes' pods counted together.
func (h *Homes) Ready(ctx context.Context, node string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	gen, now := h.cluster.Generation(), h.clk.Now()
	if h.solved && gen == h.gen {
		return !h.homeless[node]
	}
	// A change in which nodes drain is solved for at once: two nodes deleted
	// together must not each find room the other is counting on. Anything
	// else waits homesEvery.
	if !h.solved || !maps.Equal(h.cluster.LeavingNodes(), h.draining) || now.Sub(h.at) >= homesEvery {
		h.requests = h.requests.next()
		snap := h.cluster.Snapshot(nil, nil)
		snap.Requests = h.requests.memory()
		h.homeless, h.draining = homeless(snap, now, h.solve, h.requests, func() map[string][]*cloudprovider.InstanceType {
			if h.types == nil {
				return nil
			}
			return poolTypes(ctx, h.cluster.NodePools(), h.types, hclog.NewNullLogger())
		})
		h.gen, h.at, h.solved = gen, now, true
	}
	return !h.homeless[node]
}

// homeless solves for the pods of the nodes marked for deletion on the nodes
// that receive pods (the pods counted on their draining nodes as terminating,
// as they will be once evicted), and returns the draining nodes some pod of which fits
// nowhere but on capacity the pools could launch (all of them when typesOf
// returns nil), and all the draining nodes.
func homeless(snap *scheduler.Snapshot, now time.Time, opts scheduler.Options, requests *podRequests,
	typesOf func() map[string][]*cloudprovider.InstanceType) (out, draining map[string]bool) {
	owner, draining, poolOf := map[string]string{}, map[string]bool{}, map[string]string{}
	var pods []*corev1.Pod
	nodes := make([]*scheduler.StateNode, len(snap.Nodes))
	for i, sn := range snap.Nodes {
		nodes[i] = sn
		if sn.MarkedForDeletion && sn.Node != nil {
			draining[sn.Node.Name] = true
			poolOf[sn.Node.Name] = sn.Node.Labels[v1alpha1.LabelNodePool]
			for _, p := range sn.Pods {
				if p.Spec.NodeName == sn.Node.Name && scheduling.Reschedulable(p) {
					moved := *p
					moved.Spec.NodeName = ""
					pods = append(pods, &moved)
					owner[p.Namespace+"/"+p.Name] = sn.Node.Name
				}
			}
			continue
		}
		if !receives(sn) {
			marked := *sn
			marked.MarkedForDeletion = true
			nodes[i] = &marked
		}
	}
	out = map[string]bool{}
	if len(pods) == 0 {
		return out, draining
	}
	withoutMoving(nodes, owner)
	for i, sn := range nodes {
		if sn.MarkedForDeletion && sn.Node != nil && draining[sn.Node.Name] {
			nodes[i] = evicting(sn, owner, now)
		}
	}
	view := *snap
	view.Nodes = nodes
	r := &Round{Snapshot: &view, memo: &memo{requests: requests}}
	if receivers, ok := r.receivers(pods); ok {
		nodes = receivers
	}
	s := *snap
	s.Pods, s.Nodes, s.InstanceTypes = pods, nodes, nil
	// A pod whose node's pool still exists can have capacity from it, as it
	// had before; only the others are solved for with the pools' types.
	pools := map[string]bool{}
	for _, np := range snap.NodePools {
		pools[np.Name] = true
	}
	var waiting, orphaned []*corev1.Pod
	for _, u := range scheduler.Solve(&s, opts).Unschedulable {
		if pools[poolOf[owner[u.Pod.Namespace+"/"+u.Pod.Name]]] {
			waiting = append(waiting, u.Pod)
		} else {
			orphaned = append(orphaned, u.Pod)
		}
	}
	if len(orphaned) > 0 {
		if types := typesOf(); types != nil {
			orphaned = launchable(snap, orphaned, owner, types, opts)
		}
		waiting = append(waiting, orphaned...)
	}
	for _, p := range waiting {
		out[owner[p.Namespace+"/"+p.Name]] = true
	}
	return out, draining
}

// withoutMoving takes the pods being solved for off the nodes they are
// nominated to (the state counts a draining node's pods on their next home,
// so that the provisioner does not plan them twice): solved for again, they
// would find their own room there taken.
func withoutMoving(nodes []*scheduler.StateNode, moving map[string]string) {
	for i, sn := range nodes {
		if !slices.ContainsFunc(sn.Pods, func(p *corev1.Pod) bool { return isMoving(p, moving) }) {
			continue
		}
		copied := *sn
		copied.Pods = slices.DeleteFunc(slices.Clone(sn.Pods), func(p *corev1.Pod) bool { return isMoving(p, moving) })
		nodes[i] = &copied
	}
}

// isMoving: a pod nominated to its next home is not bound to it, so a bound
// pod, most of them, needs no lookup.
func isMoving(p *corev1.Pod, moving map[string]string) bool {
	if p.Spec.NodeName != "" {
		return false
	}
	_, ok := moving[p.Namespace+"/"+p.Name]
	return ok
}

// launchable returns the pods that new capacity from the pools could take,
// beside the nodes and claims there are: those worth waiting for.
func launchable(snap *scheduler.Snapshot, pods []*corev1.Pod, moving map[string]string,
	types map[string][]*cloudprovider.InstanceType, opts scheduler.Options) []*corev1.Pod {
	s := *snap
	s.Pods, s.Nodes, s.InstanceTypes = pods, slices.Clone(snap.Nodes), types
	withoutMoving(s.Nodes, moving)
	never := map[string]bool{}
	for _, u := range scheduler.Solve(&s, opts).Unschedulable {
		never[u.Pod.Namespace+"/"+u.Pod.Name] = true
	}
	return slices.DeleteFunc(pods, func(p *corev1.Pod) bool { return never[p.Namespace+"/"+p.Name] })
}
