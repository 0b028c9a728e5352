package disruption

import (
	"context"
)

// SingleNode consolidation deletes one node whose pods fit on the others, or
// replaces it with one cheaper node. It tries the candidates cheapest to
// disrupt first and returns the first command it finds; a candidate that
// cannot be removed or replaced cheaply enough is skipped without a solve
// when a cheap bound already rules it out.
type SingleNode struct {
	consolidation
}

var (
	_ Method    = SingleNode{}
	_ Waiter    = SingleNode{}
	_ Blocker   = SingleNode{}
	_ Validator = SingleNode{}
)

// NewSingleNode returns single-node consolidation.
func NewSingleNode(opts ConsolidationOptions) SingleNode {
	return SingleNode{consolidation{opts: opts.withDefaults()}}
}

// Name is "single-node".
func (SingleNode) Name() string { return "single-node" }

// ComputeCommands returns at most one command, for the first candidate, in
// order of disruption cost, whose removal or replacement is valid. A
// candidate whose pods fit nowhere, not even on new capacity, is blocked.
func (s SingleNode) ComputeCommands(_ context.Context, r *Round, candidates []*Candidate) (Result, error) {
	var res Result
	probes := 0
	for _, c := range byDisruptionCost(candidates) {
		if probes >= s.opts.MaxSingleNodeProbes {
			break
		}
		if r.Budgets[c.NodePool.Name] <= 0 {
			continue
		}
		probes++
		cmd, ok, blocked := s.try(r, s.Name(), []*Candidate{c})
		res.Blocked = append(res.Blocked, blocked...)
		if ok {
			r.Budgets.Take(c)
			res.Commands = []Command{cmd}
			return res, nil
		}
	}
	return res, nil
}

// Validate re-simulates the command's candidate on a later round: it stands
// while the candidate can still be deleted, or replaced for no more than
// before.
func (s SingleNode) Validate(_ context.Context, r *Round, cmd Command) (Command, bool) {
	return s.revalidate(r, s.Name(), cmd)
}
