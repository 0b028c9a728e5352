package scheduler

import (
	corev1 "k8s.io/api/core/v1"
)

// Fallback says why pods placed on new nodes of a pool were not placed on a
// pool of higher weight, which the solver tries first.
type Fallback struct {
	// NodePool is the pool the pods went to.
	NodePool string
	// Pods are the pods of one class that went there, in placement order.
	Pods []*corev1.Pod
	// Skipped are the pools of higher weight, highest first, with why each
	// could not take the pods (as the solve ended).
	Skipped []SkippedPool
}

// SkippedPool is one pool a fallback passed over.
type SkippedPool struct {
	NodePool string
	Weight   int32
	Reason   string
}

// fallbacks explains, per pool and pod class, every placement on a new node
// of a pool below another in weight: the reasons are the ones explain gives
// for an unschedulable pod, asked of each higher-weight pool.
func (sv *solver) fallbacks() []Fallback {
	type key struct {
		pool  *pool
		class *podClass
	}
	index := map[key]int{}
	var out []Fallback
	for _, n := range sv.nodes[sv.existing:] {
		for _, p := range n.pods {
			k := key{n.pool, p.class}
			if i, ok := index[k]; ok {
				out[i].Pods = append(out[i].Pods, p.pod)
				continue
			}
			skipped := sv.skippedFor(p, n.pool)
			if len(skipped) == 0 {
				continue
			}
			index[k] = len(out)
			out = append(out, Fallback{NodePool: n.pool.name, Pods: []*corev1.Pod{p.pod}, Skipped: skipped})
		}
	}
	return out
}

func (sv *solver) skippedFor(p *podInfo, to *pool) []SkippedPool {
	var out []SkippedPool
	for _, pl := range sv.pools {
		if pl.weight <= to.weight {
			continue
		}
		out = append(out, SkippedPool{NodePool: pl.name, Weight: pl.weight, Reason: sv.poolReason(p, p.class, pl)})
	}
	return out
}
