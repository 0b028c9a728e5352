package schedulertest

import (
	"math"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// vec is an amount of cpu, memory and pods.
type vec [3]float64

// priced is an instance type's capacity at its cheapest available offering.
type priced struct {
	capacity vec
	price    float64
}

// LowerBound is the fractional bound of WORKLOADS.md: the cheapest fractional
// mix of instance types whose summed capacity covers the pods' summed cpu,
// memory and pod count, ignoring overhead and placement constraints, at each
// type's cheapest available offering. A vertex of that linear program uses at
// most one type per binding resource; single types and pairs are enumerated,
// which is exact for up to two binding resources. It is +Inf when no mix fits.
func LowerBound(pods []*corev1.Pod, types []*cloudprovider.InstanceType) float64 {
	need := totalRequests(pods)
	cands := pricedTypes(types)
	best := math.Inf(1)
	for i, a := range cands {
		best = min(best, singleCost(a, need))
		for _, b := range cands[i+1:] {
			best = min(best, pairCost(a, b, need))
		}
	}
	return best
}

func totalRequests(pods []*corev1.Pod) vec {
	var v vec
	for _, p := range pods {
		r := scheduling.PodRequests(p)
		v[0], v[1], v[2] = v[0]+float64(r.CPU), v[1]+float64(r.Memory), v[2]+float64(r.Pods)
	}
	return v
}

func pricedTypes(types []*cloudprovider.InstanceType) []priced {
	out := make([]priced, 0, len(types))
	for _, it := range types {
		o, ok := it.Offerings.Available().Cheapest()
		if !ok {
			continue
		}
		out = append(out, priced{capacity: vec{float64(it.Capacity.CPU), float64(it.Capacity.Memory), float64(it.Capacity.Pods)}, price: o.Price})
	}
	return out
}

// singleCost is the cost of covering need with one type alone.
func singleCost(a priced, need vec) float64 {
	x := 0.0
	for r := range need {
		if need[r] <= 0 {
			continue
		}
		if a.capacity[r] <= 0 {
			return math.Inf(1)
		}
		x = max(x, need[r]/a.capacity[r])
	}
	return x * a.price
}

// pairCost is the cheapest mix of two types with two resources binding exactly
// and the third covered, or +Inf when no such vertex is feasible.
func pairCost(a, b priced, need vec) float64 {
	best := math.Inf(1)
	for _, rs := range [][3]int{{0, 1, 2}, {0, 2, 1}, {1, 2, 0}} {
		p, q, other := rs[0], rs[1], rs[2]
		det := a.capacity[p]*b.capacity[q] - b.capacity[p]*a.capacity[q]
		if det == 0 {
			continue
		}
		x := (need[p]*b.capacity[q] - b.capacity[p]*need[q]) / det
		y := (a.capacity[p]*need[q] - need[p]*a.capacity[q]) / det
		if x < 0 || y < 0 || x*a.capacity[other]+y*b.capacity[other] < need[other]*(1-1e-12) {
			continue
		}
		best = min(best, x*a.price+y*b.price)
	}
	return best
}
