package scheduler

import (
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/scheduling"
)

// Cost-aware preferences. A soft constraint shapes where pods go within the
// capacity the hard constraints need anyway, and adds capacity only within
// PreferenceCostTolerance:
//
//   - Each pod walks the same ladder as respect (ladder.go), with required
//     node-affinity terms taken as the OR they are and PreferNoSchedule
//     taints never blocking, and takes the first variant whose placement
//     costs at most 1+tolerance times, per pod, its cheapest placement with
//     no preference at all. Per pod: nothing on an existing node; on a claim
//     of this solve, the price of its type over the pods of this shape it
//     holds (capped by the variant's own per-node limit, and for a new claim
//     by the alike pods still to come).
//   - A preference that keeps pods apart per node (preferred anti-affinity or
//     a ScheduleAnyway spread on kubernetes.io/hostname) would cost a node
//     per pod; cost-aware loosens it to at most k matching pods per node,
//     the fewest whose cheapest node is within the tolerance per pod of the
//     cheapest node for those pods. The pods spread over smaller nodes as
//     far as the tolerance pays for.
//   - The whole decision must cost at most 1+tolerance times the decision
//     that ignores preferences, and place as many pods; else that decision is
//     returned. A snapshot without preferences is solved once.

// solveCostAware is Solve under the cost-aware policy.
func solveCostAware(s *Snapshot, opts Options) *Results {
	ignoring := opts
	ignoring.Preferences = PreferencesIgnore
	cheapest := solve(s, ignoring)
	if !anyPreferences(s.Pods) {
		return cheapest
	}
	opts.Preferences = PreferencesCostAware
	shaped := solve(s, opts)
	if shaped.TotalPrice() <= cheapest.TotalPrice()*(1+PreferenceCostTolerance)+1e-9 && len(shaped.Unschedulable) <= len(cheapest.Unschedulable) {
		return shaped
	}
	return cheapest
}

// anyPreferences reports whether some pod has a soft constraint.
func anyPreferences(pods []*corev1.Pod) bool {
	for _, p := range pods {
		for _, tsc := range p.Spec.TopologySpreadConstraints {
			if tsc.WhenUnsatisfiable == corev1.ScheduleAnyway {
				return true
			}
		}
		a := p.Spec.Affinity
		if a == nil {
			continue
		}
		if (a.NodeAffinity != nil && len(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0) ||
			(a.PodAffinity != nil && len(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0) ||
			(a.PodAntiAffinity != nil && len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0) {
			return true
		}
	}
	return false
}

// placeCostAware places a pod as the first variant of its ladder that costs
// little enough per pod, else as its cheapest placement.
func (sv *solver) placeCostAware(p *podInfo) string {
	base := p.class
	sv.capHostnamePreferences(p)
	free := sv.bestPlan(p, base)
	if free == nil {
		return sv.explain(p)
	}
	limit := sv.perPodCost(p, base, free)*(1+PreferenceCostTolerance) + 1e-12
	for _, c := range base.ladder[:len(base.ladder)-1] {
		if pl := sv.bestPlan(p, c); pl != nil && sv.perPodCost(p, c, pl) <= limit {
			sv.apply(p, c, pl)
			return ""
		}
	}
	sv.apply(p, base, free)
	return ""
}

// perPodCost is what a placement costs per pod: nothing on an existing node;
// on a claim, its type's price over the pods of this shape the type holds,
// no more than the variant lets a node hold and, for a new claim, than the
// alike pods still to come.
func (sv *solver) perPodCost(p *podInfo, c *podClass, pl *plan) float64 {
	n := pl.node
	if !n.isClaim() {
		return 0
	}
	types := n.types
	if pl.types != nil {
		types = pl.types
	}
	t := types[pl.typeIdx]
	holds := min(fitCount(t.alloc, p.requests), perNodeLimit(c))
	if pl.fresh {
		holds = min(holds, sv.shapes[p.shape]+1)
	}
	return t.price / float64(max(holds, 1))
}

// capHostnamePreferences sets, the first time a class is placed, the per-node
// cap of its hostname preferences: the fewest pods per node whose cheapest
// node costs per pod within the tolerance of the cheapest node for this
// pod's shape, in the first pool that can take the pod.
func (sv *solver) capHostnamePreferences(p *podInfo) {
	var groups []*topologyGroup
	for _, c := range p.class.ladder {
		for _, g := range slices.Concat(c.spreads, c.antiAffinities) {
			if g.capped && g.perNode == 0 {
				groups = append(groups, g)
			}
		}
	}
	if len(groups) == 0 {
		return
	}
	k := sv.hostnameCap(p)
	for _, g := range groups {
		g.perNode = k
	}
}

func (sv *solver) hostnameCap(p *podInfo) int {
	alike := sv.shapes[p.shape] + 1
	c := p.class
	for _, pl := range sv.pools {
		if scheduling.Tolerates(pl.taints, c.tolerations) != nil {
			continue
		}
		for _, term := range c.terms {
			if !termCompatible(pl.reqs, term) {
				continue
			}
			if k := capWithin(filterTypes(pl.types, pl.reqs.Merge(term)), p.requests, alike); k > 0 {
				return k
			}
		}
	}
	return 1
}

// capWithin is the fewest pods per node (at most alike) whose cheapest type
// costs per pod within the tolerance of the cheapest per pod; 0 when no type fits.
func capWithin(types []*typeOption, r scheduling.Resources, alike int) int {
	best := math.Inf(1)
	for _, t := range types {
		if h := min(alike, fitCount(t.alloc, r)); h > 0 {
			best = min(best, t.price/float64(h))
		}
	}
	k := 0
	for _, t := range types {
		h := min(alike, fitCount(t.alloc, r))
		if h > 0 && t.price/float64(h) <= best*(1+PreferenceCostTolerance)+1e-12 && (k == 0 || h < k) {
			k = h
		}
	}
	return k
}
