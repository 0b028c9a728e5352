package disruption

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

const (
	// DefaultMaxReturnCommands bounds the returns one round starts.
	DefaultMaxReturnCommands = 10
	// ReturnHold is how long a node a return launched is left alone by the
	// return and consolidation: a fleet that went back to spot is not moved
	// again on the next wobble of a price.
	ReturnHold = time.Hour
)

// Return moves nodes off a fallback once the capacity they would rather run
// on is back. A node is on a fallback when a pool of higher weight than its
// own exists, or it runs on-demand in a pool that allows spot: the
// provisioner would have put its pods on that preferred capacity had it been
// there. A command replaces one such node with what its pods need on the
// preferred capacity only (its pods may also go to nodes already on it), and
// only on offerings that have stayed available at a steady price for the
// node's pool's returnAfter and did not go short twice within the hour;
// nothing is done when some pod fits nowhere there. Replacements are Ready
// before the node goes, within the Fallback budgets and PDBs, oldest node
// first.
type Return struct {
	solve scheduler.Options
}

var (
	_ Method  = Return{}
	_ Waiter  = Return{}
	_ Blocker = Return{}
	_ Paced   = Return{}
)

// NewReturn returns the return to preferred capacity, simulating with solve.
func NewReturn(solve scheduler.Options) Return { return Return{solve: solve} }

// Name is "return".
func (Return) Name() string { return "return" }

// Reason is Fallback.
func (Return) Reason() string { return v1alpha1.DisruptionReasonFallback }

// ShouldDisrupt: the node is Ready, runs pods, its pool returns nodes, and
// some capacity is preferred to what it runs on.
func (Return) ShouldDisrupt(r *Round, c *Candidate) bool {
	return c.Ready && !c.Empty() && returnAfter(c.NodePool) != nil && len(r.preferences(c)) > 0
}

// EligibleAt is the earliest time one of the candidate's preferred offerings
// will have settled for its pool's returnAfter; when none is available, a
// returnAfter from now (a change of offerings runs a round before then).
func (Return) EligibleAt(r *Round, c *Candidate) time.Time {
	wait := *returnAfter(c.NodePool)
	at, found := time.Time{}, false
	r.eachPreferred(c, func(it *cloudprovider.InstanceType, o cloudprovider.Offering) {
		if t, ok := r.settlesAt(it, o, wait); ok && (!found || t.Before(at)) {
			at, found = t, true
		}
	})
	if !found {
		return r.Now.Add(wait)
	}
	return at
}

// PacedByPDBs: a return's replacements are Ready before its nodes drain, and
// PDBs pace the drain (see Paced).
func (Return) PacedByPDBs() {}

// Blocks holds a node a return launched for ReturnHold.
func (Return) Blocks(r *Round, c *Candidate) Block {
	return returnHold(r, c)
}

// ComputeCommands groups the candidates by the pool and capacity type they
// run on (alike candidates prefer the same capacity) and, group by group,
// replaces as many of a group's nodes at once as the Fallback budgets allow,
// oldest first: their pods are packed together onto the preferred capacity,
// as the provisioner would have packed them.
func (m Return) ComputeCommands(_ context.Context, r *Round, candidates []*Candidate) (Result, error) {
	var res Result
	var chosen []*Candidate
	groups := map[Target][]*Candidate{}
	var order []Target
	for _, c := range slices.SortedFunc(slices.Values(candidates), byAge) {
		k := Target{NodePool: c.NodePool.Name, CapacityType: c.Offering.CapacityType}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], c)
	}
	for _, k := range order {
		if len(res.Commands) >= DefaultMaxReturnCommands {
			break
		}
		if cmd, ok := m.command(r, groups[k], chosen); ok {
			chosen = append(chosen, cmd.Candidates...)
			res.Commands = append(res.Commands, cmd)
		}
	}
	return res, nil
}

// command simulates the group's pods onto their preferred capacity alone:
// the nodes already on it, and new nodes on its settled offerings. Earlier
// commands' candidates are gone too, their pods provided for. It takes the
// group's nodes, oldest first, as far as the budgets allow; a node whose pods
// fit nowhere there gives its budget back to the next one (a node held by
// pods that need on-demand must not stall its pool's return), for at most
// DefaultMaxReturnCommands simulations.
func (m Return) command(r *Round, group []*Candidate, chosen []*Candidate) (Command, bool) {
	prefs, wait := r.preferences(group[0]), *returnAfter(group[0].NodePool)
	types := r.settledTypes(wait, func(pool string, o cloudprovider.Offering) bool {
		spotOnly, ok := prefs[pool]
		return ok && (!spotOnly || o.CapacityType == v1alpha1.CapacityTypeSpot) && r.poolAllows(pool, o)
	})
	if len(types) == 0 {
		return Command{}, false
	}
	gone := map[string]bool{}
	for _, sn := range r.Snapshot.Nodes {
		if !preferredNode(sn, prefs) {
			gone[sn.Name()] = true
		}
	}
	for _, o := range chosen {
		gone[o.Name()] = true
	}
	var batch []*Candidate
	for range DefaultMaxReturnCommands {
		for len(group) > 0 && r.Budgets.Take(group[0]) {
			batch, group = append(batch, group[0]), group[1:]
		}
		if len(batch) == 0 {
			return Command{}, false
		}
		sim := whatIfOn(r, m.solve, batch, types, maps.Clone(gone))
		if len(sim.results.Unschedulable) == 0 {
			return m.returning(r, batch, sim, prefs, wait), true
		}
		blocked := sim.unschedulable()
		batch = slices.DeleteFunc(batch, func(c *Candidate) bool {
			drop := len(blocked) == 0 || slices.ContainsFunc(blocked, func(b Blocked) bool { return b.Candidate == c })
			if drop {
				r.Budgets.Give(c)
			}
			return drop
		})
	}
	for _, c := range batch {
		r.Budgets.Give(c)
	}
	return Command{}, false
}

// returning is the command a simulation of moving cands supports.
func (m Return) returning(r *Round, cands []*Candidate, sim simulation, prefs map[string]bool, wait time.Duration) Command {
	cmd := Command{Method: m.Name(), Reason: m.Reason(), Candidates: cands, Savings: price(cands)}
	for _, nc := range sim.results.NewNodeClaims {
		nc = pinned(nc, prefs[nc.NodePool])
		cmd.Replacements = append(cmd.Replacements, nc)
		cmd.Savings -= nc.Price()
	}
	c := cands[0]
	cmd.Target = target(r, sim.results)
	cmd.Why = fmt.Sprintf("nodepool %s (weight %d) runs them %s, a fallback: %s capacity of nodepool %s (weight %d) has been available at a steady price for at least %s",
		c.NodePool.Name, weight(c.NodePool), c.Offering.CapacityType, cmd.Target.CapacityType, cmd.Target.NodePool,
		weight(r.Pools[cmd.Target.NodePool]), wait)
	return cmd
}

// preferences are the pools whose capacity is preferred to the candidate's:
// pool name -> whether only its spot offerings are (the candidate's own
// pool, when it runs on-demand there and the pool allows spot).
func (r *Round) preferences(c *Candidate) map[string]bool {
	out := map[string]bool{}
	for name, p := range r.Pools {
		if weight(p) > weight(c.NodePool) && len(r.Snapshot.InstanceTypes[name]) > 0 {
			out[name] = false
		}
	}
	if c.Offering.CapacityType == v1alpha1.CapacityTypeOnDemand && poolRequirements(c.NodePool).Get(v1alpha1.LabelCapacityType).Has(v1alpha1.CapacityTypeSpot) {
		out[c.NodePool.Name] = true
	}
	return out
}

// eachPreferred calls f with every offering the candidate's preferred
// capacity has, available or not.
func (r *Round) eachPreferred(c *Candidate, f func(*cloudprovider.InstanceType, cloudprovider.Offering)) {
	for pool, spotOnly := range r.preferences(c) {
		for _, it := range r.Snapshot.InstanceTypes[pool] {
			for _, o := range it.Offerings {
				if (!spotOnly || o.CapacityType == v1alpha1.CapacityTypeSpot) && r.poolAllows(pool, o) {
					f(it, o)
				}
			}
		}
	}
}

// poolAllows reports whether the pool's requirements allow the offering's
// zone and capacity type.
func (r *Round) poolAllows(pool string, o cloudprovider.Offering) bool {
	p, ok := r.Pools[pool]
	if !ok {
		return false
	}
	reqs := poolRequirements(p)
	return reqs.Get(corev1.LabelTopologyZone).Has(o.Zone) && reqs.Get(v1alpha1.LabelCapacityType).Has(o.CapacityType)
}

func poolRequirements(p *v1alpha1.NodePool) scheduling.Requirements {
	return scheduling.FromAPI(p.Spec.Template.Spec.Requirements)
}

// preferredNode reports whether a node runs on capacity the preferences
// name: pods may move there.
func preferredNode(sn *scheduler.StateNode, prefs map[string]bool) bool {
	if sn.Node == nil {
		return false
	}
	spotOnly, ok := prefs[sn.Node.Labels[v1alpha1.LabelNodePool]]
	return ok && (!spotOnly || sn.Node.Labels[v1alpha1.LabelCapacityType] == v1alpha1.CapacityTypeSpot)
}

// pinned narrows a replacement to spot when only spot is preferred in its
// pool: were its spot offerings short at launch, the fleet would otherwise
// launch it on-demand, and the node would have moved for nothing.
func pinned(nc *scheduler.NewNodeClaim, spotOnly bool) *scheduler.NewNodeClaim {
	if !spotOnly {
		return nc
	}
	out := *nc
	out.Requirements = nc.Requirements.Copy()
	out.Requirements.Add(scheduling.NewRequirement(v1alpha1.LabelCapacityType, v1alpha1.OperatorIn, v1alpha1.CapacityTypeSpot))
	return &out
}

// target is where a return sends the pods: its first replacement's pool and
// capacity type, or the node that takes its first pod.
func target(r *Round, res *scheduler.Results) Target {
	if len(res.NewNodeClaims) > 0 {
		nc := res.NewNodeClaims[0]
		return Target{NodePool: nc.NodePool, CapacityType: nc.Offering.CapacityType}
	}
	for _, sn := range r.Snapshot.Nodes {
		if len(res.Existing) > 0 && sn.Node != nil && sn.Name() == res.Existing[0].Node {
			return Target{NodePool: sn.Node.Labels[v1alpha1.LabelNodePool], CapacityType: sn.Node.Labels[v1alpha1.LabelCapacityType]}
		}
	}
	return Target{}
}

// returnHold blocks a node a return launched, for ReturnHold after it was
// initialized.
func returnHold(r *Round, c *Candidate) Block {
	if c.NodeClaim.Annotations[v1alpha1.AnnotationDisruptionReason] != v1alpha1.DisruptionReasonFallback {
		return Block{}
	}
	cond := meta.FindStatusCondition(c.NodeClaim.Status.Conditions, v1alpha1.ConditionInitialized)
	if cond == nil || r.Now.Sub(cond.LastTransitionTime.Time) >= ReturnHold {
		return Block{}
	}
	until := cond.LastTransitionTime.Add(ReturnHold)
	return Block{Kind: BlockedChurn, Why: fmt.Sprintf("disruption command %s moved it back to preferred capacity; it is not moved again before %s",
		c.NodeClaim.Annotations[v1alpha1.AnnotationDisruptionCommand], until.UTC().Format(time.RFC3339)), Until: until}
}

// returnAfter is the pool's returnAfter, nil for Never.
func returnAfter(pool *v1alpha1.NodePool) *time.Duration {
	after := pool.Spec.Disruption.ReturnAfter
	if after == nil {
		return nil
	}
	return after.Duration
}

func weight(p *v1alpha1.NodePool) int32 {
	if p == nil || p.Spec.Weight == nil {
		return 0
	}
	return *p.Spec.Weight
}
