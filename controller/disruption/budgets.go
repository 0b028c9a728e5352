package disruption

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// Unbounded is the budget of a pool none of whose budgets is active for a
// reason: any number of its nodes may be disrupted.
const Unbounded = math.MaxInt32

// Budgets is how many more nodes of each pool may be disrupted now for one
// reason: NodePool name -> count. A pool missing from it allows none.
type Budgets map[string]int

// NewBudgets works out each pool's budget for reason at now, as Karpenter
// does: the smallest allowance among the pool's budgets that are active and
// apply to reason (Unbounded when none is), a percentage taken of the pool's
// initialized nodes and rounded up, less the pool's nodes already being
// disrupted (marked for deletion, not Ready, or named in busy: the nodes of
// commands not yet executed), and never below zero. A pool's minNodes caps
// the budgets of the reasons that remove nodes (floor.go).
//
// pools is NodePool name -> pool with the defaults applied. A budget that
// cannot be evaluated (a schedule the cron parser rejects) allows nothing:
// the error names each one, and the other pools' budgets still stand.
func NewBudgets(nodes []*scheduler.StateNode, pools map[string]*v1alpha1.NodePool, now time.Time, reason string, busy map[string]bool) (Budgets, error) {
	return newBudgets(countNodes(nodes, busy), pools, now, reason)
}

// budgets is NewBudgets for the round's nodes, pools, time and busy nodes,
// which counts the nodes once for all the round's reasons.
func (r *Round) budgets(reason string) (Budgets, error) {
	if r.memo == nil {
		return NewBudgets(r.Snapshot.Nodes, r.Pools, r.Now, reason, r.Busy)
	}
	if r.memo.counts == nil {
		counts := countNodes(r.Snapshot.Nodes, r.Busy)
		r.memo.counts = &counts
	}
	return newBudgets(*r.memo.counts, r.Pools, r.Now, reason)
}

func newBudgets(counts nodeCounts, pools map[string]*v1alpha1.NodePool, now time.Time, reason string) (Budgets, error) {
	total, disrupting := counts.total, counts.disrupting
	out := make(Budgets, len(pools))
	var errs []error
	for name, pool := range pools {
		allowed, err := allowedDisruptions(pool, total[name], now, reason)
		if err != nil {
			errs = append(errs, fmt.Errorf("evaluating the budgets of nodepool %s: %w", name, err))
		}
		allowed = floorAllows(pool, reason, total[name], allowed)
		out[name] = max(allowed-disrupting[name], 0)
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return out, errors.Join(errs...)
}

// countNodes counts, by pool, the initialized nodes Stowage manages and,
// among them, those already being disrupted. A node whose instance is
// shutting down after its drain (InstanceTerminating) counts in neither, as
// in Karpenter: it has nothing left to disrupt, and its pool's next
// disruption need not wait for the instance to be gone.
func countNodes(nodes []*scheduler.StateNode, busy map[string]bool) nodeCounts {
	total, disrupting := map[string]int{}, map[string]int{}
	for _, sn := range nodes {
		if !managed(sn) || !initialized(sn) || instanceTerminating(sn) {
			continue
		}
		pool := sn.NodeClaim.Labels[v1alpha1.LabelNodePool]
		total[pool]++
		if sn.MarkedForDeletion || !nodeReady(sn.Node) || busy[sn.Name()] {
			disrupting[pool]++
		}
	}
	return nodeCounts{total: total, disrupting: disrupting}
}

// nodeCounts is what countNodes counts: NodePool name -> nodes.
type nodeCounts struct{ total, disrupting map[string]int }

func instanceTerminating(sn *scheduler.StateNode) bool {
	return sn.NodeClaim != nil && meta.IsStatusConditionTrue(sn.NodeClaim.Status.Conditions, v1alpha1.ConditionInstanceTerminating)
}

// Take charges the candidate to its pool's budget and reports whether it
// may be disrupted. A node that is not Ready already counts as being
// disrupted, so removing it takes nothing: were it charged, a pool whose
// nodes all went NotReady at once would have a budget of 0 and could never
// remove them.
func (b Budgets) Take(c *Candidate) bool {
	if !c.Ready {
		return true
	}
	if b[c.NodePool.Name] <= 0 {
		return false
	}
	b[c.NodePool.Name]--
	return true
}

// Give gives back what Take charged for a candidate left out after all.
func (b Budgets) Give(c *Candidate) {
	if c.Ready {
		b[c.NodePool.Name]++
	}
}

// allowedDisruptions is the smallest allowance of the pool's budgets that
// are active at now and apply to reason, for a pool of nodes nodes.
func allowedDisruptions(pool *v1alpha1.NodePool, nodes int, now time.Time, reason string) (int, error) {
	allowed := Unbounded
	var errs []error
	for i, b := range pool.Spec.Disruption.Budgets {
		if len(b.Reasons) > 0 && !slices.Contains(b.Reasons, reason) {
			continue
		}
		n, err := budgetAllows(b, nodes, now)
		if err != nil {
			errs = append(errs, fmt.Errorf("budget %d: %w", i, err))
		}
		allowed = min(allowed, n)
	}
	return allowed, errors.Join(errs...)
}

// budgetAllows is how many of nodes one budget lets be disrupted at now:
// Unbounded outside its window, 0 when it cannot be evaluated.
func budgetAllows(b v1alpha1.Budget, nodes int, now time.Time) (int, error) {
	active, err := Active(b, now)
	if err != nil {
		return 0, err
	}
	if !active {
		return Unbounded, nil
	}
	n, err := v1alpha1.ParseBudgetNodes(b.Nodes)
	if err != nil {
		return 0, fmt.Errorf("reading nodes %q: %w", b.Nodes, err)
	}
	if !n.Percent {
		return n.Value, nil
	}
	// Rounding up, as Kubernetes does for a PDB's maxUnavailable and
	// Karpenter for budgets: 5% of 10 nodes lets one go rather than none.
	return (nodes*n.Value + 99) / 100, nil
}

// Active reports whether a budget applies at now: always without a
// schedule, otherwise for Duration after each time the schedule (a cron
// expression in UTC) fires, from the firing included to its end excluded.
func Active(b v1alpha1.Budget, now time.Time) (bool, error) {
	if b.Schedule == nil && b.Duration == nil {
		return true, nil
	}
	if b.Schedule == nil || b.Duration == nil {
		return false, errors.New("schedule and duration go together; set both or neither")
	}
	schedule, err := v1alpha1.ParseCron(*b.Schedule)
	if err != nil {
		return false, fmt.Errorf("parsing schedule %q: %w", *b.Schedule, err)
	}
	// The first firing after the window's length ago, if not in the future,
	// opened a window that is still open; later firings only extend it.
	now = now.UTC()
	return !schedule.Next(now.Add(-b.Duration.Duration)).After(now), nil
}
