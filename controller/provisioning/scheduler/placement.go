package scheduler

import (
	"fmt"
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// plan is one way to place a pod, computed without changing any state.
type plan struct {
	node *node
	// fresh is true when the node is a claim that this plan opens.
	fresh bool
	// reqs and types replace the claim's when the pod narrows them; nil keeps them.
	reqs    scheduling.Requirements
	types   []*typeOption
	typeIdx int
	// cost is what the placement adds to the hourly price.
	cost float64
}

// planExisting checks a pod against an existing node or in-flight claim.
func (sv *solver) planExisting(p *podInfo, c *podClass, n *node) *plan {
	if c.tolerates(n.taints) != nil || !anyTermCompatible(n.reqs, c.terms) {
		c.skip(n.index)
		return nil
	}
	if _, conflict := n.ports.Conflict(c.hostPorts); conflict {
		return nil
	}
	if ok, permanent := sv.topologyAllows(c, n.domain); !ok {
		if permanent {
			c.skip(n.index)
		}
		return nil
	}
	return &plan{node: n}
}

// planOnClaims puts the pod into a NodeClaim of this solve: into one with room
// at its current price if there is any, else into whichever of growing a claim
// or opening a new one costs less. A pool whose minPodPriority is above the
// pod's buys nothing for it, and so none of its claims of this solve hold it.
func (sv *solver) planOnClaims(p *podInfo, c *podClass) *plan {
	var best *plan
	upgrades := 0
	for i := sv.existing; i < len(sv.nodes); i++ {
		if c.skipped(i) {
			continue
		}
		// Scalar checks first, on the claims' figures in one slice: most claims
		// are passed over, and this loop is the solver's hottest.
		f := &sv.fits[i-sv.existing]
		cpu, mem := f.used.CPU+p.requests.CPU, f.used.Memory+p.requests.Memory
		if cpu > f.max.CPU || mem > f.max.Memory || (upgrades >= upgradeCandidates && (cpu > f.cur.CPU || mem > f.cur.Memory)) {
			continue
		}
		n := sv.nodes[i]
		if !n.pool.admits(p.priority) {
			continue
		}
		cur := &n.types[n.cur].alloc
		want := n.used.Add(p.requests)
		if !want.Fits(n.maxAlloc) {
			continue
		}
		if upgrades >= upgradeCandidates && !want.Fits(*cur) {
			continue
		}
		pl := sv.planClaim(p, c, n)
		if pl == nil {
			continue
		}
		if pl.cost <= 0 {
			return pl
		}
		upgrades++
		if best == nil || pl.cost < best.cost {
			best = pl
		}
	}
	fresh := sv.planNewClaim(p, c)
	if best != nil && (fresh == nil || (best.cost <= fresh.cost && best.node.pool.weight >= fresh.node.pool.weight)) {
		return best
	}
	return fresh
}

// planNewClaim opens a claim in the first pool, by weight, that can take the pod.
func (sv *solver) planNewClaim(p *podInfo, c *podClass) *plan {
	for _, pl := range sv.pools {
		if len(pl.types) == 0 || !pl.admits(p.priority) {
			continue
		}
		n := &node{index: -1, name: fmt.Sprintf("%s-%05d", pl.name, pl.claims+1), pool: pl, reqs: pl.reqs, taints: pl.taints}
		n.setTypes(pl.types)
		if plan := sv.planClaim(p, c, n); plan != nil {
			types := n.types
			if plan.types != nil {
				types = plan.types
			}
			plan.cost, plan.fresh = types[plan.typeIdx].price, true
			return plan
		}
	}
	return nil
}

func (sv *solver) addClaim(n *node) {
	n.index = len(sv.nodes)
	n.pool.claims++
	n.pool.nodes++
	sv.nodes = append(sv.nodes, n)
	sv.fits = append(sv.fits, fitOf(n))
}

// claimFit is a claim's CPU and memory as planOnClaims first checks them:
// used, the current type's allocatable and the largest candidate's. They are
// kept side by side for every claim, in sv.fits, so that passing over a full
// claim reads no pointer (at 30,000 claims the cache misses were most of a
// solve).
type claimFit struct{ used, cur, max struct{ CPU, Memory int64 } }

func fitOf(n *node) claimFit {
	var f claimFit
	cur := n.types[n.cur].alloc
	f.used.CPU, f.used.Memory = n.used.CPU, n.used.Memory
	f.cur.CPU, f.cur.Memory = cur.CPU, cur.Memory
	f.max.CPU, f.max.Memory = n.maxAlloc.CPU, n.maxAlloc.Memory
	return f
}

// planClaim checks a pod against a claim (new or of this solve): taints, node
// requirements (narrowing the claim's), topology (pinning the claim's domains),
// resources and limits (growing its type), host ports. Each of the pod's node
// affinity terms is tried in turn.
func (sv *solver) planClaim(p *podInfo, c *podClass, n *node) *plan {
	if c.tolerates(n.taints) != nil {
		c.skip(n.index)
		return nil
	}
	if _, conflict := n.ports.Conflict(c.hostPorts); conflict {
		return nil
	}
	compatible := false
	for _, term := range c.terms {
		reqs, ok := narrow(n.reqs, term)
		if !ok {
			continue
		}
		compatible = true
		if pl := sv.planTerm(p, c, n, reqs); pl != nil {
			return pl
		}
	}
	if !compatible {
		c.skip(n.index)
	}
	return nil
}

// planTerm places the pod on the claim narrowed to reqs (nil: not narrowed).
func (sv *solver) planTerm(p *podInfo, c *podClass, n *node, reqs scheduling.Requirements) *plan {
	reqs, ok := sv.pin(c, n, reqs)
	if !ok {
		return nil
	}
	types, start := n.types, n.cur
	if reqs != nil {
		types, start = filterTypes(n.types, reqs), 0
	}
	want := n.used.Add(p.requests)
	j, _ := n.pool.fitWithinLimits(types, start, want, n.reserved, n.index < 0)
	if j < 0 || !sv.minValuesHold(n, reqsOr(reqs, n.reqs), types, j, want) {
		return nil
	}
	if n.index < 0 {
		j = sv.sizeForAlike(p, c, n, reqsOr(reqs, n.reqs), types, j)
	}
	dom := func(key string) string { return claimDomain(n, reqsOr(reqs, n.reqs), key) }
	if ok, permanent := sv.topologyAllows(c, dom); !ok {
		if permanent && reqs == nil {
			c.skip(n.index)
		}
		return nil
	}
	pl := &plan{node: n, typeIdx: j, cost: types[j].price - n.types[n.cur].price}
	if reqs != nil {
		pl.reqs, pl.types = reqs, types
	}
	return pl
}

// sizeForAlike sizes a new claim for the pods alike to p still to come: the
// type with the lowest price per pod it would hold, of those that fit p. A
// claim opened for one pod of many would otherwise be the smallest type, and
// each later pod would open another small claim rather than grow one (the
// marginal price of growing is about the price of a second small node). The
// claim shrinks back to the cheapest type that fits what it holds at the end.
func (sv *solver) sizeForAlike(p *podInfo, c *podClass, n *node, reqs scheduling.Requirements, types []*typeOption, j int) int {
	alike, limit := sv.shapes[p.shape]+1, perNodeLimit(c)
	if alike <= 1 || limit <= 1 {
		return j
	}
	best, bestPerPod := j, types[j].price/float64(min(alike, limit, fitCount(types[j].alloc, p.requests)))
	for i := j + 1; i < len(types); i++ {
		k := min(alike, limit, fitCount(types[i].alloc, p.requests))
		if k < 1 {
			continue
		}
		if perPod := types[i].price / float64(k); perPod < bestPerPod*(1-1e-9) && sv.withinLimits(n, types[i]) {
			best, bestPerPod = i, perPod
		}
	}
	if best == j || !sv.minValuesHold(n, reqs, types, best, p.requests) {
		return j
	}
	return best
}

// perNodeLimit is how many of the class's pods a node may hold by its own
// constraints: one with host ports or a hostname spread or anti-affinity
// (kept at one whatever the spread's skew, to pack as before), a capped
// hostname preference's cap (costaware.go), else no limit.
func perNodeLimit(c *podClass) int {
	if len(c.hostPorts) > 0 {
		return 1
	}
	limit := math.MaxInt
	for _, g := range slices.Concat(c.spreads, c.antiAffinities) {
		switch {
		case g.key != corev1.LabelHostname:
		case g.capped:
			limit = min(limit, g.domainLimit())
		default:
			return 1
		}
	}
	return limit
}

// fitCount is how many pods requesting r fit in alloc.
func fitCount(alloc, r scheduling.Resources) int {
	k := math.MaxInt
	for _, d := range [][2]int64{{alloc.CPU, r.CPU}, {alloc.Memory, r.Memory}, {alloc.EphemeralStorage, r.EphemeralStorage}, {alloc.Pods, r.Pods}} {
		if d[1] > 0 {
			k = min(k, int(d[0]/d[1]))
		}
	}
	for _, e := range r.Extended {
		if e.Value > 0 {
			k = min(k, int(alloc.Get(e.Name)/e.Value))
		}
	}
	return k
}

func reqsOr(a, b scheduling.Requirements) scheduling.Requirements {
	if a != nil {
		return a
	}
	return b
}

func claimDomain(n *node, reqs scheduling.Requirements, key string) string {
	if key == corev1.LabelHostname {
		return n.name
	}
	if r, ok := reqs[key]; ok {
		if v := r.Values(); len(v) == 1 {
			return v[0]
		}
	}
	return ""
}

// narrow intersects a claim's requirements with one node affinity term of a pod.
// It returns nil requirements when the term narrows nothing, and false when the
// term is incompatible. Instance-level labels the claim leaves open are
// compatible: its instance types define them, and narrowing filters the types.
func narrow(claim scheduling.Requirements, term scheduling.Requirements) (scheduling.Requirements, bool) {
	if !termCompatible(claim, term) {
		return nil, false
	}
	for _, key := range term.Keys() {
		if have, ok := claim[key]; !ok || !have.SubsetOf(term[key]) {
			return claim.Merge(term), true
		}
	}
	return nil, true
}

func termCompatible(claim, term scheduling.Requirements) bool {
	for key, want := range term {
		have, ok := claim[key]
		switch {
		case !ok && (v1alpha1.WellKnownLabels[key] && key != corev1.LabelHostname):
			continue
		case !ok:
			if !want.AllowsAbsent() {
				return false
			}
		case want.AllowsAbsent() && have.AllowsAbsent():
			continue
		case !have.Intersects(want):
			return false
		}
	}
	return true
}

// typeCompatible reports whether an instance type can serve claim requirements:
// every label both define must intersect, and a well-known label the type lacks
// must be allowed to be absent. Pool labels the type does not define are fine.
func typeCompatible(typeReqs, claim scheduling.Requirements) bool {
	for key, want := range claim {
		have, ok := typeReqs[key]
		if !ok {
			if v1alpha1.WellKnownLabels[key] && key != v1alpha1.LabelNodePool && key != corev1.LabelHostname && !want.AllowsAbsent() {
				return false
			}
			continue
		}
		if !have.Intersects(want) {
			return false
		}
	}
	return true
}

// filterTypes keeps the types that can serve reqs, repriced for them, cheapest first.
func filterTypes(types []*typeOption, reqs scheduling.Requirements) []*typeOption {
	out := make([]*typeOption, 0, len(types))
	for _, t := range types {
		if !typeCompatible(t.it.Requirements, reqs) {
			continue
		}
		price := t.it.CheapestPrice(reqs)
		if math.IsInf(price, 1) {
			continue
		}
		if price != t.price {
			t = &typeOption{it: t.it, alloc: t.alloc, daemonSet: t.daemonSet, price: price}
		}
		out = append(out, t)
	}
	sortTypeOptions(out)
	return out
}

// commit applies a plan.
func (sv *solver) commit(p *podInfo, c *podClass, pl *plan) {
	n := pl.node
	if n.isClaim() {
		if pl.reqs != nil {
			n.reqs = pl.reqs
			n.types = pl.types
			n.maxAlloc = maxAllocatable(pl.types)
		}
		n.cur = pl.typeIdx
		n.used = n.used.Add(p.requests)
		sv.fits[n.index-sv.existing] = fitOf(n)
		sv.reserve(n)
		sv.holdReservation(n)
	} else {
		n.available = n.available.Sub(p.requests)
	}
	n.pods = append(n.pods, p)
	n.ports.Add(c.hostPorts)
	sv.order = append(sv.order, p.pod)
	sv.record(c, n)
}

// record counts the placed pod in every topology group it matches or owns.
func (sv *solver) record(c *podClass, n *node) {
	for _, g := range c.matches {
		g.add(n.domain(g.key), false)
	}
	for _, g := range c.antiAffinities {
		if d := n.domain(g.key); d != "" {
			g.owners[d]++
		}
	}
}
