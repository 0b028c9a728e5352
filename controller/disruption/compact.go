package disruption

import (
	corev1 "k8s.io/api/core/v1"

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
}

// memo holds what a round computes once for all of its simulations.
type memo struct {
	compacted *compaction
	room      *room
}

// compacted returns the round's compaction, computing it once.
func (r *Round) compacted() *compaction {
	if r.memo != nil && r.memo.compacted != nil {
		return r.memo.compacted
	}
	c := compact(r.Snapshot.Nodes, r.Busy, r.room().freeOf)
	if r.memo != nil {
		r.memo.compacted = c
	}
	return c
}

// compact folds the nodes; free is each receiver's free room.
func compact(nodes []*scheduler.StateNode, busy map[string]bool, free func(string) scheduling.Resources) *compaction {
	c := &compaction{ok: true}
	for _, sn := range nodes {
		for _, p := range sn.Pods {
			if !finished(p) && requiredAntiAffinity(p) {
				return &compaction{}
			}
		}
		if sn.MarkedForDeletion || busy[sn.Name()] || !receives(sn) {
			continue
		}
		folded := *sn
		node := *sn.Node
		node.Status.Allocatable = free(sn.Name()).List()
		folded.Node, folded.Pods = &node, nil
		c.nodes = append(c.nodes, &folded)
	}
	return c
}

// receivers returns the round's compacted receivers when the moving pods
// allow it, else nil; the compaction is computed only then.
func (r *Round) receivers(moving []*corev1.Pod) []*scheduler.StateNode {
	for _, p := range moving {
		if constrained(p) {
			return nil
		}
	}
	if c := r.compacted(); c.ok {
		return c.nodes
	}
	return nil
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
