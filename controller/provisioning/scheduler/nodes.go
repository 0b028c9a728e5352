package scheduler

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/scheduling"
)

// node is a place pods can go: an existing node or in-flight NodeClaim (fixed
// capacity), or a NodeClaim this solve is building (its instance type grows with
// its pods, from the cheapest that fits to the largest the pool allows).
type node struct {
	index  int
	name   string
	reqs   scheduling.Requirements
	taints []corev1.Taint
	ports  scheduling.HostPortUsage
	pods   []*podInfo

	// Existing nodes only.
	labels    map[string]string
	available scheduling.Resources

	// New NodeClaims only: candidate types cheapest first, the index of the
	// cheapest that holds used, and the element-wise maximum over the candidates.
	pool     *pool
	types    []*typeOption
	cur      int
	used     scheduling.Resources
	maxAlloc scheduling.Resources
	// reserved is what the claim counts against its pool's limits (limits.go).
	reserved scheduling.Resources
}

func (n *node) isClaim() bool { return n.pool != nil }

// domain is the node's value for a topology key, or "" when a new claim has not
// been pinned to one value yet.
func (n *node) domain(key string) string {
	if n.labels != nil {
		return domainValue(n.labels, n.name, key)
	}
	if key == corev1.LabelHostname {
		return n.name
	}
	if r, ok := n.reqs[key]; ok {
		if v := r.Values(); len(v) == 1 {
			return v[0]
		}
	}
	return ""
}

// firstFit is the index of the cheapest candidate type from start on whose
// allocatable holds r, or -1.
func firstFit(types []*typeOption, start int, r scheduling.Resources) int {
	for i := start; i < len(types); i++ {
		if r.Fits(types[i].alloc) {
			return i
		}
	}
	return -1
}

func maxAllocatable(types []*typeOption) scheduling.Resources {
	var m scheduling.Resources
	for _, t := range types {
		m = m.Max(t.alloc)
	}
	return m
}

// setTypes replaces the claim's candidates and re-finds the cheapest that fits.
func (n *node) setTypes(types []*typeOption) {
	n.types = types
	n.maxAlloc = maxAllocatable(types)
	n.cur = max(firstFit(types, 0, n.used), 0)
}
