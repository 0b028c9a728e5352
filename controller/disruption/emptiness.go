package disruption

import (
	"context"
	"slices"
	"time"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// Emptiness deletes nodes that have run no pod but DaemonSet and mirror pods
// for at least their pool's consolidateAfter, counted from the node's last pod
// event as the cluster state saw it. Both consolidation policies allow it;
// consolidateAfter Never turns it off. A node that is not Ready may be
// removed too: it is empty, and it already counts as being disrupted.
type Emptiness struct{}

var (
	_ Method    = Emptiness{}
	_ Waiter    = Emptiness{}
	_ Validator = Emptiness{}
)

// NewEmptiness returns the emptiness method.
func NewEmptiness() Emptiness { return Emptiness{} }

// Name is "emptiness".
func (Emptiness) Name() string { return "emptiness" }

// Reason is Empty.
func (Emptiness) Reason() string { return v1alpha1.DisruptionReasonEmpty }

// ShouldDisrupt reports whether the candidate is empty and its pool
// consolidates at all.
func (Emptiness) ShouldDisrupt(_ *Round, c *Candidate) bool {
	return consolidateAfter(c.NodePool) != nil && c.Empty()
}

// EligibleAt is the candidate's quiet time plus its pool's consolidateAfter.
func (Emptiness) EligibleAt(_ *Round, c *Candidate) time.Time {
	return c.QuietSince.Add(*consolidateAfter(c.NodePool))
}

// consolidateAfter is the pool's consolidateAfter, or nil when its policy or
// consolidateAfter Never turns consolidation off.
func consolidateAfter(pool *v1alpha1.NodePool) *time.Duration {
	switch pool.Spec.Disruption.ConsolidationPolicy {
	case v1alpha1.ConsolidationPolicyWhenEmpty, v1alpha1.ConsolidationPolicyWhenEmptyOrUnderutilized, v1alpha1.ConsolidationPolicyBalanced:
	default:
		return nil
	}
	after := pool.Spec.Disruption.ConsolidateAfter
	if after == nil || after.Duration == nil {
		return nil
	}
	return after.Duration
}

// ComputeCommands deletes the candidates, oldest first, as far as each
// pool's budget allows, in one command.
func (e Emptiness) ComputeCommands(_ context.Context, r *Round, candidates []*Candidate) (Result, error) {
	var chosen []*Candidate
	for _, c := range slices.SortedFunc(slices.Values(candidates), byAge) {
		if r.Budgets.Take(c) {
			chosen = append(chosen, c)
		}
	}
	if len(chosen) == 0 {
		return Result{}, nil
	}
	return Result{Commands: []Command{{Method: e.Name(), Reason: e.Reason(), Candidates: chosen, Savings: price(chosen)}}}, nil
}

// Validate keeps the command: the controller has already checked again that
// every candidate is still empty, unblocked and within budget.
func (Emptiness) Validate(_ context.Context, _ *Round, cmd Command) (Command, bool) { return cmd, true }

// price is the candidates' known hourly price.
func price(cs []*Candidate) float64 {
	var total float64
	for _, c := range cs {
		total += c.Offering.Price
	}
	return total
}
