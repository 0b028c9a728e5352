package disruption

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Decision is what one method decided on one round.
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
	// Eligible counts the candidates the method wanted and could act on now,
	// before budgets.
	Eligible int
	// WakeAt is the earliest instant a candidate waiting out consolidateAfter
	// becomes eligible; zero when none waits.
	WakeAt time.Time
}

// Blocked is a candidate a method wants to disrupt, and why it may not.
type Blocked struct {
	Candidate *Candidate
	Block
}

// Decide runs one round of m: it asks m which candidates to disrupt, sets
// aside those that are blocked (by a blocker every method shares, by one of
// m's own, or while they wait out consolidateAfter), and has m compute
// commands within the pools' budgets for its reason. Candidates m wanted but
// got no command for, in a pool whose budget the commands used up, are
// blocked by the budget. r.Budgets is set from the round's nodes; Decide
// changes nothing else.
func Decide(ctx context.Context, m Method, r Round, candidates []*Candidate) (Decision, error) {
	d := Decision{Method: m}
	d.Budgets, d.BudgetErr = r.budgets(m.Reason())
	r.Budgets = maps.Clone(d.Budgets)
	var wanted []*Candidate
	for _, c := range candidates {
		if r.Busy[c.Name()] || !m.ShouldDisrupt(&r, c) {
			continue
		}
		if b := blockFor(m, &r, c); b.Kind != "" {
			d.Blocked = append(d.Blocked, Blocked{Candidate: c, Block: b})
			continue
		}
		if w, ok := m.(Waiter); ok {
			if at := w.EligibleAt(&r, c); at.After(r.Now) {
				if d.WakeAt.IsZero() || at.Before(d.WakeAt) {
					d.WakeAt = at
				}
				continue
			}
		}
		wanted = append(wanted, c)
	}
	d.Eligible = len(wanted)
	res, err := m.ComputeCommands(ctx, &r, wanted)
	if err != nil {
		return Decision{}, fmt.Errorf("computing the %s commands: %w", m.Name(), err)
	}
	d.Commands = res.Commands
	d.Blocked = append(d.Blocked, res.Blocked...)
	d.Blocked = append(d.Blocked, budgetBlocked(m.Reason(), d.Budgets, res, wanted)...)
	slices.SortFunc(d.Blocked, func(x, y Blocked) int { return strings.Compare(x.Candidate.Name(), y.Candidate.Name()) })
	return d, nil
}

// blockFor is the shared blocker of the candidate, or else m's own.
func blockFor(m Method, r *Round, c *Candidate) Block {
	b := c.Blocked()
	if _, ok := m.(Paced); ok {
		b = c.BlockedPaced()
	}
	if b.Kind != "" {
		return b
	}
	if b, ok := m.(Blocker); ok {
		return b.Blocks(r, c)
	}
	return Block{}
}

// budgetBlocked returns the wanted candidates the result neither commanded
// nor blocked whose pool has no budget left once the commands have run.
func budgetBlocked(reason string, budgets Budgets, res Result, wanted []*Candidate) []Blocked {
	left, done := maps.Clone(budgets), map[string]bool{}
	for _, cmd := range res.Commands {
		for _, c := range cmd.Candidates {
			left.Take(c)
			done[c.Name()] = true
		}
	}
	for _, b := range res.Blocked {
		done[b.Candidate.Name()] = true
	}
	var out []Blocked
	for _, c := range wanted {
		if done[c.Name()] || !c.Ready || left[c.NodePool.Name] > 0 {
			continue
		}
		out = append(out, Blocked{Candidate: c, Block: Block{Kind: BlockedBudget, Why: budgetWhy(c.NodePool.Name, reason, budgets[c.NodePool.Name])}})
	}
	return out
}

func budgetWhy(pool, reason string, allowed int) string {
	if allowed == 0 {
		return fmt.Sprintf("the disruption budgets of nodepool %s allow no %s disruption now", pool, reason)
	}
	return fmt.Sprintf("the disruption budgets of nodepool %s allow %d %s disruptions now, all taken", pool, allowed, reason)
}
