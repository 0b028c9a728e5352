package scheduler

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// topologyAllows checks the class's own topology constraints, and those of other
// pods that it would count towards, on a node whose domains dom gives. permanent
// is true when the answer can never change as more pods are placed.
func (sv *solver) topologyAllows(c *podClass, dom func(string) string) (ok, permanent bool) {
	return sv.topologyAllowsOn(c, dom, "")
}

// topologyAllowsOn is topologyAllows for the constraints on one key only, or
// on every key when key is empty. Each constraint reads one key, so a claim's
// domains can be chosen key by key (chooseDomain).
func (sv *solver) topologyAllowsOn(c *podClass, dom func(string) string, key string) (ok, permanent bool) {
	on := func(g *topologyGroup) bool { return key == "" || g.key == key }
	for _, g := range c.spreads {
		if !on(g) {
			continue
		}
		d := dom(g.key)
		if d == "" {
			return false, true
		}
		if !g.allows(d) {
			return false, false
		}
	}
	for _, g := range c.affinities {
		if !on(g) {
			continue
		}
		d := dom(g.key)
		if d == "" || !(g.counts[d] > 0 || (g.total == 0 && g.matches(c.namespace, c.labels))) {
			return false, false
		}
	}
	for _, g := range c.antiAffinities {
		if d := dom(g.key); on(g) && d != "" && g.counts[d] >= g.domainLimit() {
			return false, true
		}
	}
	return sv.othersAllow(c, dom, on)
}

// othersAllow keeps the required anti-affinity of pods already placed true when
// this pod joins their domain. Their topology spreads are not rechecked:
// kube-scheduler checks a spread only when its owner binds, and the decision's
// Order lists the pods in the order that makes each spread hold.
func (sv *solver) othersAllow(c *podClass, dom func(string) string, on func(*topologyGroup) bool) (ok, permanent bool) {
	for _, g := range c.matches {
		if g.soft || g.kind != antiAffinityGroup || !on(g) {
			continue
		}
		if d := dom(g.key); d != "" && g.owners[d] > 0 {
			return false, true
		}
	}
	return true, false
}

// pin narrows a claim to one value of every topology key the class needs it
// pinned on, choosing the value that keeps spreads most even, then the cheapest.
// It returns nil requirements when nothing changes, and false when no value works.
func (sv *solver) pin(c *podClass, n *node, reqs scheduling.Requirements) (scheduling.Requirements, bool) {
	current := reqsOr(reqs, n.reqs)
	changed := false
	for _, key := range c.topologyKeys {
		if claimDomain(n, current, key) != "" {
			continue
		}
		d, ok := sv.chooseDomain(c, n, current, key)
		if !ok {
			return nil, false
		}
		current = current.Copy()
		current.Add(scheduling.NewRequirement(key, v1alpha1.OperatorIn, d))
		changed = true
	}
	if !changed {
		return reqs, true
	}
	return current, true
}

func (sv *solver) chooseDomain(c *podClass, n *node, reqs scheduling.Requirements, key string) (string, bool) {
	type candidate struct {
		value string
		count int
		price float64
	}
	var best *candidate
	for _, d := range n.pool.domainsFor(key, reqs) {
		// Only the constraints on this key: another key may not be pinned
		// yet, and planTerm checks every key once all are.
		if ok, _ := sv.topologyAllowsOn(c, func(string) string { return d }, key); !ok {
			continue
		}
		cand := candidate{value: d, count: spreadCount(c, key, d), price: cheapestIn(n, reqs, key, d)}
		if best == nil || cmp.Or(cmp.Compare(cand.count, best.count), cmp.Compare(cand.price, best.price), strings.Compare(cand.value, best.value)) < 0 {
			best = &cand
		}
	}
	if best == nil {
		return "", false
	}
	return best.value, true
}

func spreadCount(c *podClass, key, d string) int {
	n := 0
	for _, g := range slices.Concat(c.spreads, c.matches) {
		if g.kind == spreadGroup && g.key == key {
			n += g.counts[d]
		}
	}
	return n
}

// cheapestIn is the price of the claim's current type in domain d.
func cheapestIn(n *node, reqs scheduling.Requirements, key, d string) float64 {
	if len(n.types) == 0 {
		return math.Inf(1)
	}
	pinned := reqs.Copy()
	pinned.Add(scheduling.NewRequirement(key, v1alpha1.OperatorIn, d))
	return n.types[n.cur].it.CheapestPrice(pinned)
}
