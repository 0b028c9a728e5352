package disruption

import (
	"math"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// compaction is a round's nodes with their pods folded into their capacity:
// each node that receives pods carries its free room as its allocatable and
// no pods, and every other node is left out. A simulation of pods that
// constrain nothing but resources (no topology spread, pod affinity or
// anti-affinity, host ports) on a cluster where no pod asks to keep others
// away (required anti-affinity, which kube-scheduler checks both ways) places
// them exactly as on the full snapshot, and a solve then costs nothing per
// bound pod: consolidation simulates many times a round.
type compaction struct {
	// ok is false when some pod of the cluster has required anti-affinity.
	ok    bool
	nodes []*scheduler.StateNode
	// free is each node's free room, as its allocatable says.
	free []scheduling.Resources
}

// memo holds what a round computes once for all of its simulations.
type memo struct {
	compacted *compaction
	room      *room
	requests  *podRequests
	prices    *nodePrices
	pdbs      pdbIndex
	// launch are the instance types a simulation may launch (launchTypes)
	launch map[string][]*cloudprovider.InstanceType
	// totals are Balanced pools' totals, headroom the PDBs that allow some
	// disruption (balanced.go)
	totals   map[string]totals
	headroom headroomIndex
	// counts are the pools' nodes for their budgets (budgets.go)
	counts *nodeCounts
}

// fresh returns a memo for other busy nodes: it keeps only what does not
// depend on them, the pods' requests and the nodes' prices.
func (m *memo) fresh() *memo {
	if m == nil {
		return nil
	}
	return &memo{requests: m.requests, prices: m.prices}
}

// pdbs returns the round's PDBs that allow no disruption, parsed once.
func (r *Round) pdbs() pdbIndex {
	if r.memo == nil {
		return newPDBIndex(r.PDBs)
	}
	if r.memo.pdbs == nil {
		r.memo.pdbs = newPDBIndex(r.PDBs)
	}
	return r.memo.pdbs
}

// compacted returns the round's compaction, computing it once.
func (r *Round) compacted() *compaction {
	if r.memo != nil && r.memo.compacted != nil {
		return r.memo.compacted
	}
	c := compact(r.Snapshot.Nodes, r.Busy, r.room().freeOf, func(sn *scheduler.StateNode) bool { return r.podsOf(sn).antiAffinity })
	if r.memo != nil {
		r.memo.compacted = c
	}
	return c
}

// compact folds the nodes; free is each receiver's free room, and
// antiAffinity whether some unfinished pod of a node has required
// anti-affinity.
func compact(nodes []*scheduler.StateNode, busy map[string]bool, free func(string) scheduling.Resources,
	antiAffinity func(*scheduler.StateNode) bool) *compaction {
	c := &compaction{ok: true}
	for _, sn := range nodes {
		if antiAffinity(sn) {
			return &compaction{}
		}
		if sn.MarkedForDeletion || busy[sn.Name()] || !receives(sn) {
			continue
		}
		folded := *sn
		node := *sn.Node
		f := free(sn.Name())
		node.Status.Allocatable = f.List()
		folded.Node, folded.Pods = &node, nil
		c.nodes, c.free = append(c.nodes, &folded), append(c.free, f)
	}
	return c
}

// receivers returns the round's compacted receivers that have room for the
// smallest of the moving pods (a full node takes none of them, and with no
// pods on it nothing else of it matters), when the moving pods allow a
// compaction; ok is false otherwise. The compaction is computed only then.
func (r *Round) receivers(moving []*corev1.Pod) (out []*scheduler.StateNode, ok bool) {
	smallest := scheduling.Resources{CPU: math.MaxInt64, Memory: math.MaxInt64, Pods: 1}
	for _, p := range moving {
		if constrained(p) {
			return nil, false
		}
		req := r.requestsOf(p)
		smallest.CPU, smallest.Memory = min(smallest.CPU, req.CPU), min(smallest.Memory, req.Memory)
	}
	c := r.compacted()
	if !c.ok {
		return nil, false
	}
	for i, sn := range c.nodes {
		if fitsRoughly(smallest, c.free[i]) {
			out = append(out, sn)
		}
	}
	return out, true
}

// constrained reports whether the pod's placement depends on other pods.
func constrained(p *corev1.Pod) bool {
	if len(p.Spec.TopologySpreadConstraints) > 0 || len(scheduling.PodHostPorts(p)) > 0 {
		return true
	}
	a := p.Spec.Affinity
	return a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil)
}

func requiredAntiAffinity(p *corev1.Pod) bool {
	a := p.Spec.Affinity
	return a != nil && a.PodAntiAffinity != nil && len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0
}
