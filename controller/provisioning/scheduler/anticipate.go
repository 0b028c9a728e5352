package scheduler

import "github.com/stowage-dev/stowage/controller/scheduling"

// anticipated is the room a new claim keeps for expected pods of one shape.
type anticipated struct {
	pods     int
	requests scheduling.Resources
}

// anticipate is the room the claim keeps for pods expected soon
// (Snapshot.Expected) alike to its own: as many as the type it was sized at
// holds beyond its pods, and as are still expected, taken from those
// expected. A claim under minValues keeps none: narrowing its types could
// break them.
func (sv *solver) anticipate(n *node) anticipated {
	if len(n.pods) == 0 || hasMinValues(n.reqs) {
		return anticipated{}
	}
	p := n.pods[0]
	left := sv.expected[p.shape]
	if left <= 0 || perNodeLimit(p.class) <= len(n.pods) {
		return anticipated{}
	}
	k := min(left, fitCount(n.types[n.cur].alloc.Sub(n.used), p.requests), perNodeLimit(p.class)-len(n.pods))
	if k <= 0 {
		return anticipated{}
	}
	sv.expected[p.shape] -= k
	var r scheduling.Resources
	for range k {
		r = r.Add(p.requests)
	}
	return anticipated{pods: k, requests: r}
}
