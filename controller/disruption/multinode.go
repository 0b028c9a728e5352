package disruption

import (
	"context"
	"maps"

	"github.com/stowage-dev/stowage/controller/scheduling"
)

// MultiNode consolidation deletes several nodes at once, or replaces several
// with one cheaper node, when their pods fit elsewhere. It orders the
// candidates cheapest to disrupt first and takes as long a prefix of that
// order as the budgets allow; then it bounds the prefix by capacity (the
// prefix's pods must fit in what the other nodes have free, plus one new
// node of the largest type) and binary-searches the longest prefix whose
// removal a solve accepts. That is a logarithmic number of solves, however
// many candidates there are, rather than one per subset.
type MultiNode struct {
	consolidation
}

var (
	_ Method    = MultiNode{}
	_ Waiter    = MultiNode{}
	_ Blocker   = MultiNode{}
	_ Validator = MultiNode{}
)

// NewMultiNode returns multi-node consolidation.
func NewMultiNode(opts ConsolidationOptions) MultiNode {
	return MultiNode{consolidation{opts: opts.withDefaults()}}
}

// Name is "multi-node".
func (MultiNode) Name() string { return "multi-node" }

// ComputeCommands returns at most one command, removing at least two
// candidates; one candidate is single-node consolidation's.
func (m MultiNode) ComputeCommands(_ context.Context, r *Round, candidates []*Candidate) (Result, error) {
	budgets := maps.Clone(r.Budgets)
	var prefix []*Candidate
	for _, c := range byDisruptionCost(candidates) {
		if budgets.Take(c) {
			prefix = append(prefix, c)
		}
	}
	best := m.search(r, prefix, capacityBound(r, prefix))
	if len(best.Candidates) == 0 {
		return Result{}, nil
	}
	for _, c := range best.Candidates {
		r.Budgets.Take(c)
	}
	return Result{Commands: []Command{best}}, nil
}

// search finds a long prefix, of at least two candidates and at most hi,
// whose removal try accepts. It tries hi first; a failed prefix steps down
// by as many candidates as its pods that found no room would fill (the
// removal is about that much too long), and once a prefix is accepted it
// binary-searches the gap above it, until the gap is within 3% of the
// accepted length: a handful of solves where a plain binary search over
// thousands of candidates takes a dozen, for a removal at most 3% short of
// the longest (the rest waits for the next round).
func (m MultiNode) search(r *Round, prefix []*Candidate, hi int) Command {
	var best Command
	lo, guess := 2, hi
	for lo <= hi {
		if n := len(best.Candidates); n > 0 && hi-lo < max(2, n*3/100) {
			break
		}
		k := min(guess, hi)
		if k < lo {
			k = (lo + hi + 1) / 2 // the longer half first: a removal one short of hi may be all there is
		}
		cmd, ok, _, unplaced := m.tryCounting(r, m.Name(), prefix[:k])
		if ok {
			best, lo = cmd, k+1
			guess = (lo + hi + 1) / 2
			continue
		}
		hi = k - 1
		guess = k - stepDown(prefix[:k], unplaced)
	}
	return best
}

// stepDown is how many candidates' pods make unplaced pods, at the
// prefix's average of pods per candidate, and at least one.
func stepDown(prefix []*Candidate, unplaced int) int {
	pods := 0
	for _, c := range prefix {
		pods += len(c.ReschedulablePods())
	}
	if pods == 0 {
		return 1
	}
	return max(1, (unplaced*len(prefix)+pods-1)/pods)
}

// Validate re-simulates the command's candidates on a later round.
func (m MultiNode) Validate(_ context.Context, r *Round, cmd Command) (Command, bool) {
	return m.revalidate(r, m.Name(), cmd)
}

// capacityBound is the longest prefix whose pods' CPU, memory and pod count
// fit in the free capacity of the nodes outside it plus one new node of the
// largest type any pool offers: no longer prefix can be removed.
func capacityBound(r *Round, prefix []*Candidate) int {
	rm := r.room()
	spare, free := rm.largest, rm.total
	var need scheduling.Resources
	k := 0
	for i, c := range prefix {
		need = need.Add(c.Requests())
		free = free.Sub(rm.freeOf(c.Name()))
		if !fitsRoughly(need, free.Add(spare)) {
			break
		}
		k = i + 1
	}
	return k
}
