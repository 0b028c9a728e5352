package disruption

import (
	"context"
	"maps"
	"slices"

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
	for _, c := range slices.SortedFunc(slices.Values(candidates), byDisruptionCost) {
		if budgets.Take(c) {
			prefix = append(prefix, c)
		}
	}
	hi := capacityBound(r, prefix)
	var best Command
	for lo := 2; lo <= hi; {
		mid := (lo + hi) / 2
		if cmd, ok, _ := m.try(r, m.Name(), prefix[:mid]); ok {
			best, lo = cmd, mid+1
		} else {
			hi = mid - 1
		}
	}
	if len(best.Candidates) == 0 {
		return Result{}, nil
	}
	for _, c := range best.Candidates {
		r.Budgets.Take(c)
	}
	return Result{Commands: []Command{best}}, nil
}

// Validate re-simulates the command's candidates on a later round.
func (m MultiNode) Validate(_ context.Context, r *Round, cmd Command) (Command, bool) {
	return m.revalidate(r, m.Name(), cmd)
}

// capacityBound is the longest prefix whose pods' CPU, memory and pod count
// fit in the free capacity of the nodes outside it plus one new node of the
// largest type any pool offers: no longer prefix can be removed.
func capacityBound(r *Round, prefix []*Candidate) int {
	spare := largestAllocatable(r)
	free := freeCapacity(r, nil)
	var need scheduling.Resources
	k := 0
	for i, c := range prefix {
		need = need.Add(requests([]*Candidate{c}))
		if receives(c.StateNode) {
			free = free.Sub(nodeFree(c.StateNode))
		}
		if !fitsRoughly(need, free.Add(spare)) {
			break
		}
		k = i + 1
	}
	return k
}

// largestAllocatable is the element-wise largest allocatable of the pools'
// instance types.
func largestAllocatable(r *Round) scheduling.Resources {
	var out scheduling.Resources
	for _, types := range r.Snapshot.InstanceTypes {
		for _, it := range types {
			out = out.Max(it.Allocatable())
		}
	}
	return out
}
