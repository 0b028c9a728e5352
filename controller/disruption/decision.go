package disruption

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/state"
)

// Decision is what one method decided on one snapshot.
type Decision struct {
	// Method is the method that decided.
	Method Method
	// Budgets are the pools' budgets for the method's reason before the
	// Commands run.
	Budgets Budgets
	// BudgetErr names the budgets that could not be evaluated; they allow
	// nothing. The rest of the decision stands.
	BudgetErr error
	// Commands are what to do, in order.
	Commands []Command
	// Blocked are the candidates the method would disrupt but may not now,
	// sorted by name.
	Blocked []Blocked
}

// Blocked is a candidate a method wants to disrupt, and why it may not.
type Blocked struct {
	Candidate *Candidate
	// Why is a sentence fragment such as "pod default/web is annotated
	// do-not-disrupt".
	Why string
}

// Decide runs one round of m on snap at now: it builds the candidates, asks
// m which to disrupt, sets aside those that are blocked, and has m compute
// commands within the pools' budgets. Candidates m wanted but got no command
// for, in a pool whose budget the commands used up, are blocked by the
// budget. Decide changes nothing but m's own memory.
func Decide(ctx context.Context, m Method, snap *scheduler.Snapshot, now time.Time) (Decision, error) {
	pools := DefaultedPools(snap.NodePools)
	d := Decision{Method: m}
	d.Budgets, d.BudgetErr = NewBudgets(snap.Nodes, pools, now, m.Reason())
	var wanted []*Candidate
	for _, c := range NewCandidates(snap.Nodes, pools) {
		if c.BlockedBy == "" {
			c.BlockedBy = justReady(c, now)
		}
		switch {
		case !m.ShouldDisrupt(c):
		case c.BlockedBy != "":
			d.Blocked = append(d.Blocked, Blocked{Candidate: c, Why: c.BlockedBy})
		default:
			wanted = append(wanted, c)
		}
	}
	cmds, err := m.ComputeCommands(ctx, d.Budgets, wanted)
	if err != nil {
		return Decision{}, fmt.Errorf("computing the %s commands: %w", m.Name(), err)
	}
	d.Commands = cmds
	d.Blocked = append(d.Blocked, budgetBlocked(m.Reason(), d.Budgets, cmds, wanted)...)
	sortBlocked(d.Blocked)
	return d, nil
}

// justReady blocks a node that became Ready less than state.NominationGrace
// ago: kube-scheduler may still be binding the pods nominated to it, so an
// empty look does not mean the node is unneeded.
func justReady(c *Candidate, now time.Time) string {
	for _, cond := range c.Node.Status.Conditions {
		if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue && now.Sub(cond.LastTransitionTime.Time) < state.NominationGrace {
			return fmt.Sprintf("node became Ready %s ago; the pods nominated to it may still be binding", now.Sub(cond.LastTransitionTime.Time).Round(time.Second))
		}
	}
	return ""
}

// budgetBlocked returns the wanted candidates left out of cmds whose pool
// has no budget left once cmds have run.
func budgetBlocked(reason string, budgets Budgets, cmds []Command, wanted []*Candidate) []Blocked {
	left, commanded := Budgets{}, map[string]bool{}
	maps.Copy(left, budgets)
	for _, cmd := range cmds {
		for _, c := range cmd.Candidates {
			left[c.NodePool.Name]--
			commanded[c.Name()] = true
		}
	}
	var out []Blocked
	for _, c := range wanted {
		if commanded[c.Name()] || left[c.NodePool.Name] > 0 {
			continue
		}
		out = append(out, Blocked{Candidate: c, Why: budgetWhy(c.NodePool.Name, reason, budgets[c.NodePool.Name])})
	}
	return out
}

func budgetWhy(pool, reason string, allowed int) string {
	if allowed == 0 {
		return fmt.Sprintf("the disruption budgets of nodepool %s allow no %s disruption now", pool, reason)
	}
	return fmt.Sprintf("the disruption budgets of nodepool %s allow %d %s disruptions now, all taken", pool, allowed, reason)
}

func sortBlocked(b []Blocked) {
	slices.SortFunc(b, func(x, y Blocked) int { return strings.Compare(x.Candidate.Name(), y.Candidate.Name()) })
}
