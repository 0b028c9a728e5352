package disruption

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// Defaults of ConsolidationOptions.
const (
	// DefaultMinSavingsShare: a replacement must cost at most 85% of what it
	// replaces. Spot prices move by a few percent from day to day, so a
	// smaller margin would let price noise make a replacement, and then its
	// reversal, look worthwhile; adjacent instance sizes differ by half, so
	// real downsizing clears it easily. A replacement also costs a boot and a
	// restart of every pod it moves, which a few percent does not pay for.
	DefaultMinSavingsShare = 0.15
	// DefaultRecentWindow: a node launched by a disruption is not
	// consolidated again for half an hour, longer than the cycles of a
	// fluctuating load (HPA scaling, batch waves) that would otherwise shrink
	// it and grow it back.
	DefaultRecentWindow = 30 * time.Minute
	// MinSpotToSpotTypes is how many cheaper spot types a spot-to-spot
	// replacement must be able to choose from (Karpenter's rule): fewer, and
	// the replacement would likely be the next spot node interrupted.
	MinSpotToSpotTypes = 15
)

// ConsolidationOptions tunes the consolidation methods; the zero value uses
// the defaults.
type ConsolidationOptions struct {
	// Solve are the options every simulation runs with: the provisioner's.
	Solve scheduler.Options
	// MinSavingsShare is the share of the candidates' price a replacement
	// must save in a pool that sets no consolidationMinSavings;
	// DefaultMinSavingsShare when zero, none when negative.
	MinSavingsShare float64
	// RecentWindow is how long a node a disruption launched is no
	// consolidation candidate; DefaultRecentWindow when zero.
	RecentWindow time.Duration
	// SpotToSpot lets spot nodes be replaced by cheaper spot nodes, when at
	// least MinSpotToSpotTypes cheaper spot types remain; off by default, as
	// in Karpenter.
	SpotToSpot bool
	// MaxSingleNodeProbes bounds the simulations single-node consolidation
	// runs in one round; 50 when zero.
	MaxSingleNodeProbes int
}

func (o ConsolidationOptions) withDefaults() ConsolidationOptions {
	switch {
	case o.MinSavingsShare == 0:
		o.MinSavingsShare = DefaultMinSavingsShare
	case o.MinSavingsShare < 0:
		o.MinSavingsShare = 0
	}
	if o.RecentWindow <= 0 {
		o.RecentWindow = DefaultRecentWindow
	}
	if o.MaxSingleNodeProbes <= 0 {
		o.MaxSingleNodeProbes = 50
	}
	return o
}

// consolidation is what single- and multi-node consolidation share: which
// candidates they take, the churn guard, and what a valid command is.
type consolidation struct {
	opts ConsolidationOptions
}

// Reason is Underutilized.
func (consolidation) Reason() string { return v1alpha1.DisruptionReasonUnderutilized }

// ShouldDisrupt: the node runs pods, is Ready, has a known price, and its
// pool consolidates underutilized nodes (WhenEmptyOrUnderutilized, or
// Balanced, which scores each move). Empty nodes are emptiness's; a pool with
// the WhenEmpty policy (a GPU pool serving warm models, say) never has a busy
// node consolidated, whatever the savings.
func (consolidation) ShouldDisrupt(_ *Round, c *Candidate) bool {
	policy := c.NodePool.Spec.Disruption.ConsolidationPolicy
	return (policy == v1alpha1.ConsolidationPolicyWhenEmptyOrUnderutilized || policy == v1alpha1.ConsolidationPolicyBalanced) &&
		consolidateAfter(c.NodePool) != nil && c.Ready && c.Offering.PriceKnown && !c.Empty()
}

// minSavings is the share of the candidates' price a replacement must save:
// the largest of their pools' consolidationMinSavings, each pool without one
// counting the controller's MinSavingsShare.
func (k consolidation) minSavings(cands []*Candidate) float64 {
	share := 0.0
	for _, c := range cands {
		s := k.opts.MinSavingsShare
		if v := c.NodePool.Spec.Disruption.ConsolidationMinSavings; v != nil {
			if parsed, err := v1alpha1.ParseShare(*v); err == nil {
				s = parsed
			}
		}
		share = max(share, s)
	}
	return share
}

// EligibleAt is the candidate's quiet time plus its pool's consolidateAfter.
func (consolidation) EligibleAt(_ *Round, c *Candidate) time.Time {
	return c.QuietSince.Add(*consolidateAfter(c.NodePool))
}

// Blocks is the churn guard: a node a disruption launched is left alone for
// RecentWindow after it was initialized (a time on the controllers' clock,
// which the API server's creation timestamp is not in a simulation), and so
// is a node whose last command rolled back, until the controller says.
func (k consolidation) Blocks(r *Round, c *Candidate) Block {
	if b := returnHold(r, c); b.Kind != "" {
		return b
	}
	if until, ok := r.Cooling[c.Name()]; ok && r.Now.Before(until) {
		return Block{Kind: BlockedChurn, Why: "a disruption command for it rolled back; it is not consolidated again before " +
			until.UTC().Format(time.RFC3339), Until: until}
	}
	cmd := c.NodeClaim.Annotations[v1alpha1.AnnotationDisruptionCommand]
	cond := meta.FindStatusCondition(c.NodeClaim.Status.Conditions, v1alpha1.ConditionInitialized)
	if cmd == "" || cond == nil {
		return Block{}
	}
	age := r.Now.Sub(cond.LastTransitionTime.Time)
	if age >= k.opts.RecentWindow {
		return Block{}
	}
	return Block{Kind: BlockedChurn, Why: fmt.Sprintf("disruption command %s launched it, %s ago; it is not consolidated within %s",
		cmd, age.Round(time.Second), k.opts.RecentWindow), Until: cond.LastTransitionTime.Add(k.opts.RecentWindow)}
}

// try simulates removing cands. Their pods are first placed on the other
// nodes alone, where a preference (a ScheduleAnyway spread, say) gives way
// rather than asks for a new node, as kube-scheduler would place them: if
// they all fit, and still do spread as kube-scheduler spreads them
// (spreadHomeless), the command deletes cands. Otherwise, when the pods left over
// could fit on one node of a type cheap enough, the solve runs again with new
// capacity allowed: one new node that saves enough makes a replacement.
// Cheap bounds skip either solve when it cannot succeed. blocked names the
// candidates whose pods fit nowhere, even on new capacity.
func (k consolidation) try(r *Round, name string, cands []*Candidate) (cmd Command, ok bool, blocked []Blocked) {
	cmd, ok, blocked, _ = k.tryCounting(r, name, cands)
	return cmd, ok, blocked
}

// tryCounting is try, also returning how many of the candidates' pods the
// other nodes could not take (all of them when no solve was run).
func (k consolidation) tryCounting(r *Round, name string, cands []*Candidate) (cmd Command, ok bool, blocked []Blocked, unplaced int) {
	rm := r.room()
	left := requests(cands).Sub(rm.freeExcept(cands)).Max(scheduling.Resources{})
	for _, c := range cands {
		unplaced += len(c.ReschedulablePods())
	}
	if ok, beyond := rm.mayHold(r, cands); !ok {
		left = left.Max(beyond)
	} else {
		sim := whatIf(r, k.opts.Solve, cands, false)
		if len(sim.results.Unschedulable) == 0 {
			// kube-scheduler, not the solver, binds them: room it does not
			// leave them is no home, and no new node is planned for them.
			if homeless := spreadHomeless(r, sim); len(homeless) > 0 {
				return Command{}, false, nil, len(homeless)
			}
			cmd = Command{Method: name, Reason: k.Reason(), Candidates: cands, Savings: price(cands)}
			return cmd, r.balanced(&cmd), nil, 0
		}
		left, unplaced = scheduling.Resources{}, len(sim.results.Unschedulable)
		for _, u := range sim.results.Unschedulable {
			left = left.Add(r.requestsOf(u.Pod))
		}
	}
	// Spot replacing spot takes SpotToSpot and 15 cheaper spot types: short
	// of that the bound counts on-demand offerings only.
	onDemand := allSpot(cands) && !k.opts.SpotToSpot
	if !fitsRoughly(left, rm.largest) || rm.cheapest(left, onDemand) >= price(cands)*(1-k.minSavings(cands)) {
		return Command{}, false, nil, unplaced
	}
	sim := whatIf(r, k.opts.Solve, cands, true)
	if blocked := sim.unschedulable(); len(blocked) > 0 {
		return Command{}, false, blocked, unplaced
	}
	if cmd, ok = k.command(name, cands, sim); ok {
		ok = r.balanced(&cmd)
	}
	return cmd, ok, nil, unplaced
}

// command turns a simulation of removing cands into a command: a deletion
// when every pod fits on the other nodes, a replacement when they need one
// new node that saves enough; ok is false otherwise.
func (k consolidation) command(name string, cands []*Candidate, sim simulation) (Command, bool) {
	res := sim.results
	if len(res.Unschedulable) > 0 || len(res.NewNodeClaims) > 1 {
		return Command{}, false
	}
	cmd := Command{Method: name, Reason: k.Reason(), Candidates: cands, Savings: price(cands)}
	if len(res.NewNodeClaims) == 0 {
		return cmd, true
	}
	replacement, ok := k.replacement(cands, res.NewNodeClaims[0])
	if !ok {
		return Command{}, false
	}
	cmd.Replacements = []*scheduler.NewNodeClaim{replacement}
	cmd.Savings -= replacement.Price()
	return cmd, true
}

// revalidate simulates removing the command's candidates again: a deletion
// stands while their pods still fit on the other nodes; a replacement while
// they still need at most one new node costing no more than before (a
// deletion then being better still).
func (k consolidation) revalidate(r *Round, name string, cmd Command) (Command, bool) {
	next, ok, _ := k.try(r, name, cmd.Candidates)
	if !ok || len(cmd.Replacements) == 0 && len(next.Replacements) > 0 {
		return Command{}, false
	}
	if len(cmd.Replacements) > 0 && len(next.Replacements) > 0 && next.Replacements[0].Price() > cmd.Replacements[0].Price() {
		return Command{}, false
	}
	next.ID = cmd.ID
	return next, true
}

// replacement narrows the new node's instance types to those that save at
// least minSavings of the candidates' price and that none of the
// candidates replaced before (the replace-then-replace-back pattern). When
// every candidate is spot, the replacement may be spot only with SpotToSpot
// on and at least MinSpotToSpotTypes such types left; otherwise it is pinned
// to on-demand. ok is false when no type is left.
func (k consolidation) replacement(cands []*Candidate, nc *scheduler.NewNodeClaim) (*scheduler.NewNodeClaim, bool) {
	limit := price(cands) * (1 - k.minSavings(cands))
	replaced := replacedTypes(cands)
	reqs := nc.Requirements
	if allSpot(cands) && !(k.opts.SpotToSpot && len(keptTypes(nc.InstanceTypes, reqs, replaced, limit, v1alpha1.CapacityTypeSpot)) >= MinSpotToSpotTypes) {
		reqs = reqs.Copy()
		reqs.Add(scheduling.NewRequirement(v1alpha1.LabelCapacityType, v1alpha1.OperatorIn, v1alpha1.CapacityTypeOnDemand))
	}
	kept := keptTypes(nc.InstanceTypes, reqs, replaced, limit, "")
	if len(kept) == 0 {
		return nil, false
	}
	out := *nc
	out.Requirements = reqs.Copy()
	names := make([]string, len(kept))
	for i, it := range kept {
		names[i] = it.Name
	}
	out.Requirements[corev1.LabelInstanceTypeStable] = scheduling.NewRequirement(corev1.LabelInstanceTypeStable, v1alpha1.OperatorIn, names...)
	out.InstanceTypes = kept
	out.Offering, _ = cheapestIn(kept[0], reqs, "")
	return &out, true
}

// keptTypes returns, cheapest first, the types not in replaced whose
// cheapest offering the requirements allow (of capacityType, when set) costs
// less than limit.
func keptTypes(types []*cloudprovider.InstanceType, reqs scheduling.Requirements, replaced map[string]bool, limit float64, capacityType string) []*cloudprovider.InstanceType {
	var kept []*cloudprovider.InstanceType
	prices := map[string]float64{}
	for _, it := range types {
		if replaced[it.Name] {
			continue
		}
		if o, ok := cheapestIn(it, reqs, capacityType); ok && o.Price < limit {
			kept = append(kept, it)
			prices[it.Name] = o.Price
		}
	}
	slices.SortStableFunc(kept, func(a, b *cloudprovider.InstanceType) int { return cmp.Compare(prices[a.Name], prices[b.Name]) })
	return kept
}

// cheapestIn is the type's cheapest available offering the requirements
// allow, of capacityType when it is set.
func cheapestIn(it *cloudprovider.InstanceType, reqs scheduling.Requirements, capacityType string) (cloudprovider.Offering, bool) {
	ofs := it.Offerings.Available().Compatible(reqs)
	if capacityType != "" {
		ofs = slices.DeleteFunc(ofs, func(o cloudprovider.Offering) bool { return o.CapacityType != capacityType })
	}
	return ofs.Cheapest()
}

// replacedTypes are the instance types the candidates replaced before, as
// their claims record them.
func replacedTypes(cands []*Candidate) map[string]bool {
	out := map[string]bool{}
	for _, c := range cands {
		for _, t := range strings.Split(c.NodeClaim.Annotations[v1alpha1.AnnotationReplacedInstanceTypes], ",") {
			if t != "" {
				out[t] = true
			}
		}
	}
	return out
}

// historyTypes are what a replacement of the candidates records: their
// instance types and those they replaced before.
func historyTypes(cands []*Candidate) map[string]bool {
	out := replacedTypes(cands)
	for _, c := range cands {
		if c.Offering.InstanceType != "" {
			out[c.Offering.InstanceType] = true
		}
	}
	return out
}

func allSpot(cands []*Candidate) bool {
	return !slices.ContainsFunc(cands, func(c *Candidate) bool { return c.Offering.CapacityType != v1alpha1.CapacityTypeSpot })
}

// byDisruptionCost returns the candidates cheapest to disrupt first: fewest
// pods to evict (a pod of higher priority counts more), then least used,
// then dearest, then by name. Each candidate's cost is worked out once.
func byDisruptionCost(cands []*Candidate) []*Candidate {
	type keyed struct {
		c           *Candidate
		cost, usage float64
	}
	ks := make([]keyed, len(cands))
	for i, c := range cands {
		ks[i] = keyed{c: c, cost: c.podSummary().evictionCost, usage: utilization(c)}
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		return cmp.Or(cmp.Compare(a.cost, b.cost), cmp.Compare(a.usage, b.usage),
			cmp.Compare(b.c.Offering.Price, a.c.Offering.Price), strings.Compare(a.c.Name(), b.c.Name()))
	})
	out := make([]*Candidate, len(ks))
	for i, k := range ks {
		out[i] = k.c
	}
	return out
}

// utilization is the larger of the candidate's CPU and memory requests as a
// share of its allocatable.
func utilization(c *Candidate) float64 {
	used, alloc := c.Requests(), c.Node.Status.Allocatable
	share := func(u int64, name corev1.ResourceName) float64 {
		q, ok := alloc[name]
		if !ok || q.IsZero() {
			return 1
		}
		if name == corev1.ResourceCPU {
			return float64(u) / float64(q.MilliValue())
		}
		return float64(u) / float64(q.Value())
	}
	return max(share(used.CPU, corev1.ResourceCPU), share(used.Memory, corev1.ResourceMemory))
}
