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
//   - A preference that keeps pods apart per node (preferred anti-affinity or
//     a ScheduleAnyway spread on kubernetes.io/hostname) would cost a node
//     per pod; cost-aware loosens it to at most k matching pods per node,
//     the fewest whose cheapest node costs per pod within the tolerance of
//     the cheapest node per pod for those pods. The pods spread over smaller
//     nodes as far as the tolerance pays for.
//   - Each pod walks the same ladder as respect (ladder.go), with required
//     node-affinity terms taken as the OR they are, PreferNoSchedule taints
//     never blocking and hostname preferences capped, and takes the first
//     variant whose placement costs per pod at most 1+tolerance times its
//     reference placement: with only its capped hostname preferences (or
//     none, when they cannot hold). Per pod: nothing on an existing node; on
//     a claim of this solve, the price of its type over the pods of this
//     shape it holds (no more than the variant lets a node hold, and for a
//     new claim no more than the alike pods still to come). So a preference
//     uses room that is paid for anyway, and opens or grows capacity only
//     when that costs about what the pod would cost without it.
//   - The whole decision must cost at most 1+tolerance times the decision
//     that ignores preferences, and place as many pods; else that decision is
//     returned. A snapshot without preferences is solved once.

// solveCostAware is Solve under the cost-aware policy.
func solveCostAware(s *Snapshot, opts Options) *Results {
	ignoring := opts
	ignoring.Preferences = PreferencesIgnore
	cheapest := solve(s, ignoring)
	if !anyPreferences(s.Pending()) {
		return cheapest
	}
	opts.Preferences = PreferencesCostAware
	shaped := solve(s, opts)
	// A bound may cut the two solves at different pods: the shaped one must
	// leave no more pods unplaced, waiting included.
	unplaced := func(r *Results) int { return len(r.Unschedulable) + len(r.Waiting) }
	if shaped.TotalPrice() <= cheapest.TotalPrice()*(1+PreferenceCostTolerance)+1e-9 && unplaced(shaped) <= unplaced(cheapest) {
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
// per pod within the tolerance of its reference placement: where it goes
// with its hostname preferences capped (costaware.go's header) and no other
// preference, or with none at all when those cannot hold.
func (sv *solver) placeCostAware(p *podInfo) string {
	base := p.class
	sv.capHostnamePreferences(p)
	ref, refPlan := base, (*plan)(nil)
	if base.hostnameOnly != nil {
		ref, refPlan = base.hostnameOnly, sv.bestPlan(p, base.hostnameOnly)
	}
	if refPlan == nil {
		ref, refPlan = base, sv.bestPlan(p, base)
	}
	if refPlan == nil {
		return sv.explain(p)
	}
	limit := sv.perPodCost(p, ref, refPlan)*(1+PreferenceCostTolerance) + 1e-12
	for _, c := range base.ladder[:len(base.ladder)-1] {
		if pl := sv.bestPlan(p, c); pl != nil && sv.perPodCost(p, c, pl) <= limit {
			sv.apply(p, c, pl)
			return ""
		}
	}
	sv.apply(p, ref, refPlan)
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
	k := sv.shapeCost(p).cap
	for _, g := range groups {
		g.perNode = k
	}
}

// shapeCost is what new nodes cost per pod of one shape.
type shapeCost struct {
	// best is the lowest price per pod over the types of the first pool
	// that can take the pod, each holding as many of the alike pods as fit.
	best float64
	// cap is the fewest pods per node whose cheapest type costs per pod
	// within the tolerance of best.
	cap int
}

// shapeCost is computed for a shape the first time one of its pods is
// placed, for all its alike pods.
func (sv *solver) shapeCost(p *podInfo) shapeCost {
	if sc, ok := sv.shapeCosts[p.shape]; ok {
		return sc
	}
	sc := shapeCost{best: math.Inf(1), cap: 1}
	alike, c := sv.shapes[p.shape]+1, p.class
	for _, pl := range sv.pools {
		if scheduling.Tolerates(pl.taints, c.tolerations) != nil {
			continue
		}
		for _, term := range c.terms {
			if termCompatible(pl.reqs, term) {
				if found, ok := costWithin(filterTypes(pl.types, pl.reqs.Merge(term)), p.requests, alike); ok {
					sc = found
					break
				}
			}
		}
		if sc.cap > 1 || !math.IsInf(sc.best, 1) {
			break
		}
	}
	sv.shapeCosts[p.shape] = sc
	return sc
}

// costWithin finds the lowest price per pod over the types, each holding at
// most alike pods, and the fewest pods per node within the tolerance of it;
// false when no type fits the pod.
func costWithin(types []*typeOption, r scheduling.Resources, alike int) (shapeCost, bool) {
	sc := shapeCost{best: math.Inf(1)}
	for _, t := range types {
		if h := min(alike, fitCount(t.alloc, r)); h > 0 {
			sc.best = min(sc.best, t.price/float64(h))
		}
	}
	for _, t := range types {
		h := min(alike, fitCount(t.alloc, r))
		if h > 0 && t.price/float64(h) <= sc.best*(1+PreferenceCostTolerance)+1e-12 && (sc.cap == 0 || h < sc.cap) {
			sc.cap = h
		}
	}
	return sc, sc.cap > 0
}
