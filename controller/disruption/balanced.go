package disruption

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/termination"
)

// Balanced consolidation, Karpenter's (v1.14): a move (a consolidation
// command) is made only when the share of its pool's hourly cost it saves is
// at least 1/BalancedK of the share of its pool's disruption cost it causes.
// A pool's disruption cost counts 1 per node and, per pod, its eviction
// cost: Karpenter's (1, plus its pod-deletion-cost over 2^27 and its
// priority over 2^25, clamped to [-10, 10], never below 0 here), plus what
// Stowage adds: up to 1 for its age (a pod that has run a day has caches and
// connections to rebuild; one that just started has little), and 1/allowed
// for a PodDisruptionBudget that allows only allowed disruptions (the move
// spends its headroom). docs/guides/disruption.md works an example.
const (
	// DeletionCostScale and PriorityScale are Karpenter's divisors of a
	// pod's deletion cost and priority in its eviction cost.
	DeletionCostScale = 1 << 27
	PriorityScale     = 1 << 25
	// MaxEvictionCost bounds Karpenter's part of a pod's eviction cost.
	MaxEvictionCost = 10
	// FullAge is the age at which a pod's age adds its whole 1 to its
	// disruption cost.
	FullAge = 24 * time.Hour
)

// evictionCost is Karpenter's eviction cost of a pod: 1, plus its
// pod-deletion-cost over 2^27, plus its priority over 2^25, clamped to
// [-MaxEvictionCost, MaxEvictionCost]. It orders candidates cheapest to
// disrupt first.
func evictionCost(p *corev1.Pod) float64 {
	cost := 1.0
	if v, err := strconv.ParseInt(p.Annotations[corev1.PodDeletionCost], 10, 32); err == nil {
		cost += float64(v) / DeletionCostScale
	}
	if p.Spec.Priority != nil {
		cost += float64(*p.Spec.Priority) / PriorityScale
	}
	return max(-MaxEvictionCost, min(MaxEvictionCost, cost))
}

// PodDisruption is what moving one pod costs under Balanced, part by part.
type PodDisruption struct {
	// Eviction is Karpenter's eviction cost, not below 0.
	Eviction float64
	// Age is the pod's running time over FullAge, at most 1.
	Age float64
	// Headroom is 1/allowed for the PDB selecting it that allows fewest
	// disruptions, 0 when none does.
	Headroom float64
}

// Total is the pod's disruption cost.
func (d PodDisruption) Total() float64 { return d.Eviction + d.Age + d.Headroom }

// podDisruption is what moving p at now costs, with pdbs the round's
// budgets that allow some disruption.
func podDisruption(p *corev1.Pod, now time.Time, pdbs headroomIndex) PodDisruption {
	d := PodDisruption{Eviction: max(0, evictionCost(p)), Headroom: pdbs.cost(p)}
	if age := now.Sub(termination.PodStart(p)); age > 0 {
		d.Age = min(1, float64(age)/float64(FullAge))
	}
	return d
}

// MoveScore is how a move weighs in one Balanced pool.
type MoveScore struct {
	Pool string
	// Savings is what the move saves the pool an hour: its candidates'
	// price, less the replacement's price in the share their price bears in
	// the move's; PoolCost the pool's nodes' price an hour.
	Savings, PoolCost float64
	// Disruption is the candidates' disruption cost (1 per node, and their
	// pods'), PoolDisruption the pool's.
	Disruption, PoolDisruption float64
}

// Score is the savings share of the pool's cost over the disruption share
// of its disruption cost; +Inf for a move that disrupts nothing.
func (s MoveScore) Score() float64 {
	if s.Savings <= 0 || s.PoolCost <= 0 {
		return 0
	}
	if s.Disruption <= 0 || s.PoolDisruption <= 0 {
		return math.Inf(1)
	}
	return (s.Savings / s.PoolCost) / (s.Disruption / s.PoolDisruption)
}

// Approved: the score is at least 1/BalancedK.
func (s MoveScore) Approved() bool { return s.Score() >= 1.0/v1alpha1.BalancedK }

// String says it as the command's events do.
func (s MoveScore) String() string {
	verdict := ">="
	if !s.Approved() {
		verdict = "<"
	}
	return fmt.Sprintf("nodepool %s: saves %.1f%% of its cost for %.1f%% of its disruption cost, score %.2f %s %.2f",
		s.Pool, 100*s.Savings/s.PoolCost, 100*s.Disruption/s.PoolDisruption, s.Score(), verdict, 1.0/v1alpha1.BalancedK)
}

// balancedScores scores the command in each of its candidates' pools whose
// policy is Balanced, by name.
func (r *Round) balancedScores(cmd Command) []MoveScore {
	total, replaced := price(cmd.Candidates), 0.0
	for _, nc := range cmd.Replacements {
		replaced += nc.Price()
	}
	byPool := map[string]*MoveScore{}
	for _, c := range cmd.Candidates {
		if c.NodePool.Spec.Disruption.ConsolidationPolicy != v1alpha1.ConsolidationPolicyBalanced {
			continue
		}
		s := byPool[c.NodePool.Name]
		if s == nil {
			t := r.poolTotals(c.NodePool.Name)
			s = &MoveScore{Pool: c.NodePool.Name, PoolCost: t.cost, PoolDisruption: t.disruption}
			byPool[c.NodePool.Name] = s
		}
		share := 0.0
		if total > 0 {
			share = c.Offering.Price / total
		}
		s.Savings += c.Offering.Price - replaced*share
		s.Disruption += r.nodeDisruption(c)
	}
	var out []MoveScore
	for _, name := range slices.Sorted(maps.Keys(byPool)) {
		out = append(out, *byPool[name])
	}
	return out
}

// balanced reports whether every Balanced pool of the command approves it,
// and says why in the command.
func (r *Round) balanced(cmd *Command) bool {
	for _, s := range r.balancedScores(*cmd) {
		ConsolidationScores.WithLabelValues(s.Pool, decision(s.Approved())).Observe(s.Score())
		if !s.Approved() {
			return false
		}
		if cmd.Why != "" {
			cmd.Why += "; "
		}
		cmd.Why += "Balanced " + s.String()
	}
	return true
}

func decision(approved bool) string {
	if approved {
		return DecisionApproved
	}
	return DecisionRejected
}

// nodeDisruption is 1 for the node and its reschedulable pods' costs.
func (r *Round) nodeDisruption(c *Candidate) float64 {
	d, pdbs := 1.0, r.headroom()
	for _, p := range c.ReschedulablePods() {
		d += podDisruption(p, r.Now, pdbs).Total()
	}
	return d
}

// totals are a pool's hourly cost and disruption cost.
type totals struct{ cost, disruption float64 }

// poolTotals sums, over the pool's initialized nodes, their prices and
// disruption costs, once a round.
func (r *Round) poolTotals(pool string) totals {
	if r.memo != nil {
		if t, ok := r.memo.totals[pool]; ok {
			return t
		}
	}
	var t totals
	pdbs := r.headroom()
	for _, sn := range r.Snapshot.Nodes {
		if !managed(sn) || !initialized(sn) || sn.NodeClaim.Labels[v1alpha1.LabelNodePool] != pool {
			continue
		}
		t.cost += r.offering(pool, sn.Node).Price
		t.disruption++
		for _, p := range r.podsOf(sn).reschedulable {
			t.disruption += podDisruption(p, r.Now, pdbs).Total()
		}
	}
	if r.memo != nil {
		if r.memo.totals == nil {
			r.memo.totals = map[string]totals{}
		}
		r.memo.totals[pool] = t
	}
	return t
}

// headroomIndex holds the PDBs that allow some disruption, by namespace.
type headroomIndex map[string][]headroomPDB

type headroomPDB struct {
	selector labels.Selector
	allowed  int32
}

func (r *Round) headroom() headroomIndex {
	if r.memo != nil && r.memo.headroom != nil {
		return r.memo.headroom
	}
	ix := newHeadroomIndex(r.PDBs)
	if r.memo != nil {
		r.memo.headroom = ix
	}
	return ix
}

func newHeadroomIndex(pdbs []*policyv1.PodDisruptionBudget) headroomIndex {
	out := headroomIndex{}
	for _, pdb := range pdbs {
		if pdb.Status.DisruptionsAllowed <= 0 || pdb.Spec.Selector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil {
			continue
		}
		out[pdb.Namespace] = append(out[pdb.Namespace], headroomPDB{selector: sel, allowed: pdb.Status.DisruptionsAllowed})
	}
	return out
}

// cost is 1/allowed for the matching PDB that allows fewest disruptions.
func (ix headroomIndex) cost(p *corev1.Pod) float64 {
	out := 0.0
	for _, h := range ix[p.Namespace] {
		if h.selector.Matches(labels.Set(p.Labels)) {
			out = max(out, 1/float64(h.allowed))
		}
	}
	return out
}
