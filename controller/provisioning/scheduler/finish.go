package scheduler

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// finish turns the solver's nodes into Results.
func (sv *solver) finish(r *Results) {
	for _, n := range sv.nodes[:sv.existing] {
		for _, p := range n.pods {
			r.Existing = append(r.Existing, Placement{Pod: p.pod, Node: n.name})
		}
	}
	slices.SortStableFunc(r.Existing, func(a, b Placement) int { return comparePods(a.Pod, b.Pod) })
	budgets := map[*pool]*limitBudget{}
	for _, n := range sv.nodes[sv.existing:] {
		b := budgets[n.pool]
		if b == nil {
			b = &limitBudget{spent: n.pool.baseUsage, pending: n.pool.usage.Sub(n.pool.baseUsage)}
			budgets[n.pool] = b
		}
		nc, worst := sv.newNodeClaim(n, b.headroom(n), sv.anticipate(n))
		b.spent = b.spent.Add(worst)
		r.NewNodeClaims = append(r.NewNodeClaims, nc)
	}
	slices.SortStableFunc(r.Unschedulable, func(a, b Unschedulable) int { return comparePods(a.Pod, b.Pod) })
	r.Order = sv.order
	if sv.opts.ExplainFallbacks {
		r.Fallbacks = sv.fallbacks()
	}
}

func comparePods(a, b *corev1.Pod) int {
	return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
}

// newNodeClaim ranks every type that fits the claim's pods, and the room it
// keeps for expected pods, by price, within the headroom its pool's limits
// leave it (limits.go), and keeps at most MaxInstanceTypes of them; without
// the room when no type within the limits holds it. It returns the claim and
// its worst case: the largest capacity, resource by resource, that its launch
// may bring.
func (sv *solver) newNodeClaim(n *node, headroom scheduling.Resources, room anticipated) (*NewNodeClaim, scheduling.Resources) {
	ranked := sv.rank(n, headroom, n.used.Add(room.requests))
	if len(ranked) == 0 {
		ranked, room = sv.rank(n, headroom, n.used), anticipated{}
	}
	first := ranked[0]
	names := make([]string, len(ranked))
	types := make([]*cloudprovider.InstanceType, len(ranked))
	var worst scheduling.Resources
	for i, t := range ranked {
		names[i], types[i] = t.it.Name, t.it
		worst = worst.Max(t.it.Capacity)
	}
	reqs := n.reqs.Copy()
	reqs.Add(scheduling.NewRequirement(corev1.LabelInstanceTypeStable, v1alpha1.OperatorIn, names...))
	offering := sv.claimOffering(n, first, reqs)
	pods := make([]*corev1.Pod, len(n.pods))
	for i, p := range n.pods {
		pods[i] = p.pod
	}
	slices.SortStableFunc(pods, comparePods)
	return &NewNodeClaim{Name: n.name, NodePool: n.pool.name, Requirements: reqs, InstanceTypes: types, Pods: pods,
		Requests: n.used.Add(first.daemonSet), DaemonSetRequests: first.daemonSet, Offering: offering, Anticipated: room.pods}, worst
}

// rank lists the claim's types that hold need within headroom, cheapest
// first, at most MaxInstanceTypes. Every type is considered, not only those
// from cur on: a claim sized for alike pods that went elsewhere shrinks back.
func (sv *solver) rank(n *node, headroom, need scheduling.Resources) []*typeOption {
	var ranked []*typeOption
	for _, t := range n.types {
		if !need.Fits(t.alloc) || n.pool.exceeds(t.it.Capacity, headroom) {
			continue
		}
		ranked = append(ranked, t)
		if len(ranked) == sv.opts.MaxInstanceTypes {
			break
		}
	}
	return ranked
}

// exceeds reports whether capacity goes over headroom in a resource the pool limits.
func (p *pool) exceeds(capacity, headroom scheduling.Resources) bool {
	for _, name := range p.limited {
		if capacity.Get(name) > headroom.Get(name) {
			return true
		}
	}
	return false
}

// explain says, pool by pool, why a pod fits nowhere.
func (sv *solver) explain(p *podInfo) string {
	if len(sv.pools) == 0 {
		return "no nodepool exists"
	}
	c := p.class
	var reasons []string
	for _, pl := range sv.pools {
		reasons = append(reasons, fmt.Sprintf("nodepool %s: %s", pl.name, sv.poolReason(p, c, pl)))
	}
	return strings.Join(reasons, "; ")
}

func (sv *solver) poolReason(p *podInfo, c *podClass, pl *pool) string {
	if !pl.admits(p.priority) {
		return fmt.Sprintf("the pod's priority %d is below the pool's minPodPriority %d: it only uses room the pool's nodes have",
			p.priority, *pl.np.Spec.MinPodPriority)
	}
	if err := scheduling.Tolerates(pl.taints, c.tolerations); err != nil {
		return err.Error()
	}
	if len(pl.types) == 0 {
		return "no instance type it allows has an available offering"
	}
	var term scheduling.Requirements
	for _, t := range c.terms {
		if termCompatible(pl.reqs, t) {
			term = t
			break
		}
	}
	if term == nil {
		if err := pl.reqs.Compatible(c.terms[0]); err != nil {
			return err.Error()
		}
		return fmt.Sprintf("its requirements conflict with the pod's node selector %s", c.terms[0])
	}
	reqs := pl.reqs.Merge(term)
	types := filterTypes(pl.types, reqs)
	if len(types) == 0 {
		return fmt.Sprintf("no instance type matches %s with an available offering", term) + pl.unavailableZonesNote()
	}
	if firstFit(types, 0, p.requests) < 0 {
		name := p.requests.Exceeding(maxAllocatable(types))
		return fmt.Sprintf("no instance type offers %s %s in zones [%s]", quantity(name, p.requests.Get(name)), name,
			strings.Join(pl.domainsFor(corev1.LabelTopologyZone, term), " "))
	}
	if j, name := pl.fitWithinLimits(types, 0, p.requests, scheduling.Resources{}, true); j < 0 {
		return fmt.Sprintf("launching would exceed its %s limit", name)
	}
	if reason := sv.minValuesReason(pl, reqs, types, p.requests); reason != "" {
		return reason
	}
	if reason := sv.pinnedMinValuesReason(p, c, pl, reqs, types); reason != "" {
		return reason
	}
	if _, conflict := (&scheduling.HostPortUsage{}).Conflict(c.hostPorts); conflict {
		return "host ports conflict"
	}
	return sv.topologyReason(c) + pl.unavailableZonesNote()
}

// unavailableZonesNote names the zones where the cloud launches none of the
// pool's types and says why (a zonal shift), so that a pod a zone spread or a
// zone selector leaves pending says so; empty when there are none.
func (pl *pool) unavailableZonesNote() string {
	why, open := map[string]string{}, map[string]bool{}
	for _, t := range pl.types {
		for _, o := range t.it.Offerings {
			if o.Available {
				open[o.Zone] = true
			} else if o.UnavailableReason != "" {
				why[o.Zone] = o.UnavailableReason
			}
		}
	}
	var notes []string
	for _, zone := range slices.Sorted(maps.Keys(why)) {
		if !open[zone] {
			notes = append(notes, "zone "+zone+": "+why[zone])
		}
	}
	if len(notes) == 0 {
		return ""
	}
	return " (no launches into " + strings.Join(notes, "; ") + ")"
}

// minValuesReason names the requirement whose minValues the Strict policy cannot
// meet for a new claim holding only this pod, or is empty.
func (sv *solver) minValuesReason(pl *pool, reqs scheduling.Requirements, types []*typeOption, want scheduling.Resources) string {
	if sv.opts.MinValuesPolicy == MinValuesBestEffort {
		return ""
	}
	r, have := minValuesShortfall(reqs, sv.listing(pl, pl.limits.Sub(pl.usage), types, firstFit(types, 0, want), want))
	if r == nil {
		return ""
	}
	return fmt.Sprintf("minValues %d of %s: the instance types that fit offer only %d; allow more values or lower minValues", *r.MinValues, r.Key, have)
}

// pinnedMinValuesReason names a minValues that no new claim for the pod can
// meet once its topology constraints pin the claim to one domain of their
// key (a zone spread puts each new node in one zone): a minValues above 1 on
// that key, which the unpinned check passes, is then the cause, not the spread.
func (sv *solver) pinnedMinValuesReason(p *podInfo, c *podClass, pl *pool, reqs scheduling.Requirements, types []*typeOption) string {
	for _, key := range c.topologyKeys {
		r := reqs.Get(key)
		domains := pl.domainsFor(key, reqs)
		if r == nil || r.MinValues == nil || *r.MinValues < 2 || len(domains) == 0 {
			continue
		}
		pinned := reqs.Copy()
		pinned.Add(scheduling.NewRequirement(key, v1alpha1.OperatorIn, domains[0]))
		fits := filterTypes(types, pinned)
		if firstFit(fits, 0, p.requests) < 0 {
			continue
		}
		if reason := sv.minValuesReason(pl, pinned, fits, p.requests); reason != "" {
			return fmt.Sprintf("%s (the pod's topology constraint on %s puts each new node in one %s)", reason, key, key)
		}
	}
	return ""
}

func (sv *solver) topologyReason(c *podClass) string {
	// An affinity no pod can ever meet blocks the pod whatever else holds.
	for _, g := range c.affinities {
		if g.total == 0 && !g.matches(c.namespace, c.labels) {
			return fmt.Sprintf("cannot satisfy %s", g)
		}
	}
	for _, g := range slices.Concat(c.spreads, c.affinities, c.antiAffinities) {
		return fmt.Sprintf("cannot satisfy %s", g)
	}
	return "no node with room satisfies every constraint"
}

func quantity(name corev1.ResourceName, v int64) string {
	switch name {
	case corev1.ResourceCPU:
		return resource.NewMilliQuantity(v, resource.DecimalSI).String()
	case corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
		return resource.NewQuantity(v, resource.BinarySI).String()
	}
	return resource.NewQuantity(v, resource.DecimalSI).String()
}
