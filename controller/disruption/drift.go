package disruption

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// DefaultMaxDriftCommands bounds the replacements one round starts.
const DefaultMaxDriftCommands = 10

// Drift replaces nodes whose NodeClaim's Drifted condition is True: the
// NodeClaim drift controller (controller/nodeclaim/drift) detects drift, this
// method only reads the condition. Empty drifted nodes are deleted together;
// every other drifted node gets a command of its own that launches what its
// pods need (nothing when they fit on the other nodes) before it goes,
// oldest first, as far as the Drifted budgets allow. Drift renews nodes
// rather than saving money: its commands book no savings.
type Drift struct {
	solve scheduler.Options
}

var (
	_ Method = Drift{}
	_ Paced  = Drift{}
)

// NewDrift returns the drift method, simulating with solve.
func NewDrift(solve scheduler.Options) Drift { return Drift{solve: solve} }

// Name is "drift".
func (Drift) Name() string { return "drift" }

// PacedByPDBs: a drifted node's replacements are Ready before it drains,
// and PDBs pace the drain (see Paced), as Karpenter's eventual disruption.
func (Drift) PacedByPDBs() {}

// Reason is Drifted.
func (Drift) Reason() string { return v1alpha1.DisruptionReasonDrifted }

// ShouldDisrupt reports whether the candidate's claim is Drifted and its
// node Ready.
func (Drift) ShouldDisrupt(_ *Round, c *Candidate) bool {
	return c.Ready && meta.IsStatusConditionTrue(c.NodeClaim.Status.Conditions, v1alpha1.ConditionDrifted)
}

// ComputeCommands deletes the empty candidates in one command, then
// replaces the others one command each, oldest first, up to
// DefaultMaxDriftCommands a round. A candidate whose pods fit nowhere, even
// on new nodes, is blocked.
func (d Drift) ComputeCommands(_ context.Context, r *Round, candidates []*Candidate) (Result, error) {
	var res Result
	var empty, chosen []*Candidate
	for _, c := range slices.SortedFunc(slices.Values(candidates), byAge) {
		if len(c.ReschedulablePods()) > 0 || !r.Budgets.Take(c) {
			continue
		}
		empty = append(empty, c)
	}
	if len(empty) > 0 {
		res.Commands = append(res.Commands, Command{Method: d.Name(), Reason: d.Reason(), Candidates: empty})
	}
	for _, c := range slices.SortedFunc(slices.Values(candidates), byAge) {
		if len(c.ReschedulablePods()) == 0 || len(res.Commands) >= DefaultMaxDriftCommands || r.Budgets[c.NodePool.Name] <= 0 {
			continue
		}
		// Earlier commands' candidates are gone too: their pods go to their
		// own replacements, not into the room this one's pods need.
		sim := whatIf(r, d.solve, []*Candidate{c}, true, chosen...)
		if blocked := sim.unschedulable(); len(blocked) > 0 {
			res.Blocked = append(res.Blocked, blocked...)
			continue
		}
		r.Budgets.Take(c)
		chosen = append(chosen, c)
		res.Commands = append(res.Commands, Command{Method: d.Name(), Reason: d.Reason(), Candidates: []*Candidate{c},
			Replacements: sim.results.NewNodeClaims})
	}
	return res, nil
}
