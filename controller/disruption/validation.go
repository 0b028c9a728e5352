package disruption

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// validating reports whether a command is still waiting out its validation
// delay: no new decision is made until it is through, since it would be made
// on the free room this command counts on.
func (q *queue) validating() bool {
	for _, p := range q.pending {
		if p.stage == validating {
			return true
		}
	}
	return false
}

// validate checks again every validating command whose delay is over, on
// the round's fresh state: it is executed if it still holds, dropped if the
// world changed.
func (c *Controller) validate(ctx context.Context, r Round) (started bool, err error) {
	var errs []error
	for _, p := range c.queue.take(validating) {
		if r.Now.Before(p.due) {
			c.queue.pending = append(c.queue.pending, p)
			continue
		}
		r.Busy, r.memo = c.queue.busy(), r.memo.fresh()
		cmd, why := c.revalidate(ctx, r, p.cmd)
		if why != "" {
			Commands.WithLabelValues(p.cmd.Method, ResultDropped).Inc()
			c.log.Info("disruption command dropped", "command", p.cmd.ID, "method", p.cmd.Method,
				"nodes", strings.Join(p.cmd.Names(), ","), "why", why)
			continue
		}
		Commands.WithLabelValues(p.cmd.Method, ResultValidated).Inc()
		errs = append(errs, c.queue.start(ctx, &pending{cmd: cmd}))
		started = true
	}
	return started, errors.Join(errs...)
}

// revalidate returns the command to execute, or why it no longer holds:
// every candidate must still be one, unblocked, wanted by its method, past
// its wait and within its pool's budget, and the method's own check (a new
// simulation) must pass.
func (c *Controller) revalidate(ctx context.Context, r Round, cmd Command) (Command, string) {
	m := c.method(cmd.Method)
	if m == nil {
		return Command{}, "its method is not run any more"
	}
	budgets, err := r.budgets(m.Reason())
	if err != nil {
		return Command{}, "its budgets cannot be evaluated: " + err.Error()
	}
	r.Budgets = budgets
	fresh := map[string]*Candidate{}
	for _, cand := range NewCandidates(&r) {
		fresh[cand.Name()] = cand
	}
	next := cmd
	next.Candidates = nil
	for _, old := range cmd.Candidates {
		cand, why := stillWanted(m, &r, fresh[old.Name()], old)
		if why != "" {
			return Command{}, why
		}
		next.Candidates = append(next.Candidates, cand)
	}
	if v, ok := m.(Validator); ok {
		validated, ok := v.Validate(ctx, &r, next)
		if !ok {
			return Command{}, "a new simulation no longer supports it"
		}
		next = validated
	}
	return next, ""
}

// stillWanted checks one candidate of a command on the round.
func stillWanted(m Method, r *Round, cand, old *Candidate) (*Candidate, string) {
	switch {
	case cand == nil || cand.NodeClaim.UID != old.NodeClaim.UID:
		return nil, fmt.Sprintf("node %s is no candidate any more", old.Name())
	case !m.ShouldDisrupt(r, cand):
		return nil, fmt.Sprintf("the %s method no longer wants node %s", m.Name(), cand.Name())
	}
	if b := blockFor(m, r, cand); b.Kind != "" {
		return nil, fmt.Sprintf("node %s is blocked: %s", cand.Name(), b.Why)
	}
	if w, ok := m.(Waiter); ok && w.EligibleAt(r, cand).After(r.Now) {
		return nil, fmt.Sprintf("node %s had a pod event since", cand.Name())
	}
	if !r.Budgets.Take(cand) {
		return nil, fmt.Sprintf("the budgets of nodepool %s allow no more %s disruptions", cand.NodePool.Name, m.Reason())
	}
	return cand, ""
}

// method returns the controller's method of that name, or nil.
func (c *Controller) method(name string) Method {
	for _, m := range c.opts.Methods {
		if m.Name() == name {
			return m
		}
	}
	return nil
}

// settled is the last round that found nothing to do: a round on the same
// cluster state and offerings would decide the same, so it is skipped, until
// a waiting candidate's time comes or DefaultRevisit passes.
type settled struct {
	ok        bool
	gen       uint64
	offerings uint64
	at        time.Time
	// wakeAt is the earliest instant a waiting candidate becomes eligible.
	wakeAt time.Time
}

func (s *settled) skip(gen, offerings uint64, now time.Time) bool {
	if !s.ok || gen != s.gen || offerings != s.offerings || now.Sub(s.at) >= DefaultRevisit {
		return false
	}
	return s.wakeAt.IsZero() || now.Before(s.wakeAt)
}

// recent reports whether the last settled pass was less than gap ago and no
// wait it noted has ended since.
func (s *settled) recent(gap time.Duration, now time.Time) bool {
	return s.ok && now.Sub(s.at) < gap && (s.wakeAt.IsZero() || now.Before(s.wakeAt))
}

func (s *settled) done(gen, offerings uint64, now time.Time) {
	s.ok, s.gen, s.offerings, s.at = true, gen, offerings, now
}

func (s *settled) reset() { s.ok, s.wakeAt = false, time.Time{} }

// wake remembers the earliest wait that ends.
func (s *settled) wake(at time.Time) {
	if !at.IsZero() && (s.wakeAt.IsZero() || at.Before(s.wakeAt)) {
		s.wakeAt = at
	}
}
