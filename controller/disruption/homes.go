package disruption

import (
	"context"
	"maps"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
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
// still launching counts only once it is Ready.
type Homes struct {
	clk     clock.PassiveClock
	cluster *state.Cluster
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
// provisioner's options).
func NewHomes(clk clock.PassiveClock, cluster *state.Cluster, solve scheduler.Options) *Homes {
	return &Homes{clk: clk, cluster: cluster, solve: solve}
}

// Ready reports whether every pod on the node that would need a new home
// fits on a Ready node, all draining nodes' pods counted together.
func (h *Homes) Ready(_ context.Context, node string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	gen, now := h.cluster.Generation(), h.clk.Now()
	if h.solved && gen == h.gen {
		return !h.homeless[node]
	}
	// A change in which nodes drain is solved for at once: two nodes deleted
	// together must not each find room the other is counting on. Anything
	// else waits homesEvery.
	snap := h.cluster.Snapshot(nil, nil)
	if !h.solved || !maps.Equal(drainingNodes(snap), h.draining) || now.Sub(h.at) >= homesEvery {
		h.requests = h.requests.next()
		h.homeless, h.draining = homeless(snap, h.solve, h.requests)
		h.gen, h.at, h.solved = gen, now, true
	}
	return !h.homeless[node]
}

// drainingNodes names the nodes marked for deletion.
func drainingNodes(snap *scheduler.Snapshot) map[string]bool {
	out := map[string]bool{}
	for _, sn := range snap.Nodes {
		if sn.MarkedForDeletion && sn.Node != nil {
			out[sn.Node.Name] = true
		}
	}
	return out
}

// homeless solves for the pods of the nodes marked for deletion on the nodes
// that receive pods, and returns the draining nodes some pod of which fits
// nowhere, and all the draining nodes.
func homeless(snap *scheduler.Snapshot, opts scheduler.Options, requests *podRequests) (out, draining map[string]bool) {
	owner, draining := map[string]string{}, map[string]bool{}
	var pods []*corev1.Pod
	nodes := make([]*scheduler.StateNode, len(snap.Nodes))
	for i, sn := range snap.Nodes {
		nodes[i] = sn
		if sn.MarkedForDeletion && sn.Node != nil {
			draining[sn.Node.Name] = true
			for _, p := range sn.Pods {
				if p.Spec.NodeName == sn.Node.Name && reschedulable(p) {
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
	r := &Round{Snapshot: snap, memo: &memo{requests: requests}}
	if receivers, ok := r.receivers(pods); ok {
		nodes = receivers
	}
	s := *snap
	s.Pods, s.Nodes, s.InstanceTypes = pods, nodes, nil
	for _, u := range scheduler.Solve(&s, opts).Unschedulable {
		out[owner[u.Pod.Namespace+"/"+u.Pod.Name]] = true
	}
	return out, draining
}
