package disruption

import (
	"context"
	"maps"
	"slices"
	"time"

	"k8s.io/utils/clock"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// Emptiness deletes nodes that have run no pod but DaemonSet and mirror pods
// for at least their pool's consolidateAfter. Both consolidation policies
// allow it; consolidateAfter Never turns it off.
//
// It samples: a node is empty since the first round that found it empty,
// and a pod seen on it resets that. A pod that lands and leaves between two
// rounds goes unseen.
type Emptiness struct {
	clk clock.PassiveClock
	// emptySince is node name -> the first round that found it empty since a
	// pod was last seen on it.
	emptySince map[string]time.Time
	// asked is the nodes ShouldDisrupt was asked about this round.
	asked map[string]bool
}

var _ Method = (*Emptiness)(nil)

// Waiting reports whether some node is empty and waiting out its pool's
// consolidateAfter.
func (e *Emptiness) Waiting() bool { return len(e.emptySince) > 0 }

// NewEmptiness returns the emptiness method, timing emptiness on clk.
func NewEmptiness(clk clock.PassiveClock) *Emptiness {
	return &Emptiness{clk: clk, emptySince: map[string]time.Time{}, asked: map[string]bool{}}
}

// Name is "emptiness".
func (e *Emptiness) Name() string { return "emptiness" }

// Reason is Empty.
func (e *Emptiness) Reason() string { return v1alpha1.DisruptionReasonEmpty }

// ShouldDisrupt records whether the candidate is empty and reports whether
// it has been for the pool's consolidateAfter.
func (e *Emptiness) ShouldDisrupt(c *Candidate) bool {
	name := c.Name()
	e.asked[name] = true
	if len(c.ReschedulablePods) > 0 {
		delete(e.emptySince, name)
		return false
	}
	now := e.clk.Now()
	since, ok := e.emptySince[name]
	if !ok {
		since = now
		e.emptySince[name] = now
	}
	after := c.NodePool.Spec.Disruption.ConsolidateAfter
	if !consolidates(c.NodePool) || after == nil || after.Duration == nil {
		return false
	}
	return now.Sub(since) >= *after.Duration
}

// consolidates reports whether the pool's consolidation policy allows
// deleting empty nodes, which both policies do.
func consolidates(pool *v1alpha1.NodePool) bool {
	switch pool.Spec.Disruption.ConsolidationPolicy {
	case v1alpha1.ConsolidationPolicyWhenEmpty, v1alpha1.ConsolidationPolicyWhenEmptyOrUnderutilized:
		return true
	}
	return false
}

// ComputeCommands deletes the candidates, oldest first, as far as each
// pool's budget allows, in one command. It forgets the nodes ShouldDisrupt
// was not asked about this round.
func (e *Emptiness) ComputeCommands(_ context.Context, budgets Budgets, candidates []*Candidate) ([]Command, error) {
	maps.DeleteFunc(e.emptySince, func(name string, _ time.Time) bool { return !e.asked[name] })
	clear(e.asked)
	left := maps.Clone(budgets)
	var chosen []*Candidate
	for _, c := range slices.SortedFunc(slices.Values(candidates), byAge) {
		if left[c.NodePool.Name] <= 0 {
			continue
		}
		left[c.NodePool.Name]--
		chosen = append(chosen, c)
	}
	if len(chosen) == 0 {
		return nil, nil
	}
	return []Command{{Reason: e.Reason(), Candidates: chosen}}, nil
}
