package scheduler

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/scheduling"
)

// A NodePool's limits must hold whatever type each claim's launch falls back
// to. The solver places pods counting each claim of the solve at its
// reservation (the capacity of its current type, or, under Strict minValues,
// of the largest of the fewest types it must list), so no pod is refused
// for a fallback it may never need. When the decision is final, finish hands
// out what the limits leave: claim by claim, in creation order, a claim
// lists only the types that fit in the limits less the existing nodes, the
// in-flight claims at their worst case, the earlier claims at their worst
// case (their largest listed type) and the later claims at their
// reservation. The worst cases of all the lists then fit together, every
// claim keeps its cheapest type, and only claims near a limit lose
// fallbacks. (Karpenter instead counts every claim at its largest type while
// it solves, which keeps the fallbacks but refuses pods a limit could take.)

// withinLimits checks the pool's limits for the claim grown (or opened) to
// type t: t's capacity must fit in what the limits leave the claim.
func (sv *solver) withinLimits(n *node, t *typeOption) bool {
	_, ok := n.pool.withinLimits(t.it.Capacity.Sub(n.reserved), n.index < 0)
	return ok
}

// fitWithinLimits is the index of the cheapest type from start on that holds
// want and whose capacity, in place of what the claim reserves, stays within
// the pool's limits, and -1 with the limit the cheapest that holds want
// breaks when there is none. The cheapest that holds want may break a limit
// that a dearer type with less capacity keeps (GPU types, whose price follows
// the GPUs, not the vCPUs): Karpenter too drops the types over the limit
// before it chooses.
func (p *pool) fitWithinLimits(types []*typeOption, start int, want, reserved scheduling.Resources, newNode bool) (int, corev1.ResourceName) {
	var broken corev1.ResourceName
	for j := firstFit(types, start, want); j >= 0; j = firstFit(types, j+1, want) {
		name, ok := p.withinLimits(types[j].it.Capacity.Sub(reserved), newNode)
		if ok {
			return j, ""
		}
		if broken == "" {
			broken = name
		}
		if name == "nodes" {
			break
		}
	}
	return -1, broken
}

// claimHeadroom is how much of its pool's limits a claim may use: the limits
// less every other node's and claim's count.
func claimHeadroom(n *node) scheduling.Resources {
	return n.pool.limits.Sub(n.pool.usage).Add(n.reserved)
}

// reserve recounts a claim's reservation in its pool's usage after the claim changed.
func (sv *solver) reserve(n *node) {
	r := sv.reservation(n)
	n.pool.usage = n.pool.usage.Add(r.Sub(n.reserved))
	n.reserved = r
}

// reservation is what a claim counts against its pool's limits while the
// solve goes on: its current type's capacity, or under Strict minValues the
// largest capacity of the fewest types (cheapest first) it must list.
func (sv *solver) reservation(n *node) scheduling.Resources {
	cur := n.types[n.cur].it.Capacity
	if len(n.pool.limited) == 0 || sv.opts.MinValuesPolicy == MinValuesBestEffort || !hasMinValues(n.reqs) {
		return cur
	}
	listed := sv.listing(n.pool, claimHeadroom(n), n.types, n.cur, n.used)
	for k := 1; k <= len(listed); k++ {
		if r, _ := minValuesShortfall(n.reqs, listed[:k]); r == nil {
			listed = listed[:k]
			break
		}
	}
	for _, t := range listed {
		cur = cur.Max(t.it.Capacity)
	}
	return cur
}

// minValuesHold reports whether, under the Strict policy, the claim n grown to
// types[j] would still list enough values for every requirement with minValues.
func (sv *solver) minValuesHold(n *node, reqs scheduling.Requirements, types []*typeOption, j int, want scheduling.Resources) bool {
	if sv.opts.MinValuesPolicy == MinValuesBestEffort || !hasMinValues(reqs) {
		return true
	}
	r, _ := minValuesShortfall(reqs, sv.listing(n.pool, claimHeadroom(n), types, j, want))
	return r == nil
}

func hasMinValues(reqs scheduling.Requirements) bool {
	for _, r := range reqs {
		if r.MinValues != nil {
			return true
		}
	}
	return false
}

// listing is what a claim would list from types[j] on: the types that hold
// want and fit in headroom, cheapest first, at most MaxInstanceTypes.
func (sv *solver) listing(p *pool, headroom scheduling.Resources, types []*typeOption, j int, want scheduling.Resources) []*typeOption {
	var listed []*typeOption
	for _, t := range types[j:] {
		if want.Fits(t.alloc) && !p.exceeds(t.it.Capacity, headroom) {
			listed = append(listed, t)
			if len(listed) == sv.opts.MaxInstanceTypes {
				break
			}
		}
	}
	return listed
}

// minValuesShortfall returns the first requirement (by key) with minValues
// that the listed types cannot meet, with how many values they offer; nil
// when every minValues holds.
func minValuesShortfall(reqs scheduling.Requirements, listed []*typeOption) (*scheduling.Requirement, int) {
	var keys []string
	for k, r := range reqs {
		if r.MinValues != nil {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		r := reqs[k]
		seen := map[string]bool{}
		for _, t := range listed {
			for _, v := range t.it.Requirements.Get(r.Key).Values() {
				if r.Has(v) {
					seen[v] = true
				}
			}
		}
		if len(seen) < *r.MinValues {
			return r, len(seen)
		}
	}
	return nil, 0
}

// limitBudget hands out, claim by claim, what a pool's limits leave for the
// claims' fallback lists.
type limitBudget struct {
	// spent counts the existing nodes, in-flight claims and the claims already
	// listed at their worst case; pending the reservations of those still to list.
	spent, pending scheduling.Resources
}

// headroom is what the next claim's list may use, and takes it out of pending.
func (b *limitBudget) headroom(n *node) scheduling.Resources {
	b.pending = b.pending.Sub(n.reserved)
	return n.pool.limits.Sub(b.spent).Sub(b.pending)
}
