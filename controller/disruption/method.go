// Package disruption removes nodes Stowage no longer needs, or must replace,
// without losing workloads. A Method (drift, emptiness, multi-node and
// single-node consolidation, in that order) is a pure decider: given a Round
// (a snapshot of the cluster state, the clock, the pools' disruption
// budgets) it returns Commands as data. The Controller runs the methods in
// order every Interval; the first method that returns commands wins the
// round. Consolidation commands are validated again after a delay, then the
// queue executes every command: it launches the replacements, waits until
// they are Initialized, and only then deletes the candidates' NodeClaims,
// after which the termination controller drains and terminates them.
//
// Expiration is not a Method: like Karpenter v1, it is forceful and not
// budgeted, and lives in controller/nodeclaim/expiration. docs/guides/disruption.md
// describes the whole design.
package disruption

import (
	"context"
	"time"

	policyv1 "k8s.io/api/policy/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// Method is one way of disrupting nodes.
//
// A round asks ShouldDisrupt about every candidate, blocked ones included, so
// that blocked candidates can be reported, then calls ComputeCommands once
// with those it accepted that are neither blocked nor waiting. Both are pure:
// a method keeps no memory between rounds, and what it decides depends only on
// the Round and the candidates, so that the same input gives the same
// Commands in the same order, and a new leader decides as the old one would.
// Methods are not safe for concurrent use; the Controller runs one round at a
// time.
type Method interface {
	// Name identifies the method in logs, metrics and events, e.g. "emptiness".
	Name() string
	// Reason is the disruption reason the method acts for, as budgets name
	// it (v1alpha1.DisruptionReasonEmpty, ...).
	Reason() string
	// ShouldDisrupt reports whether the method would act on the candidate
	// were nothing to block it.
	ShouldDisrupt(r *Round, c *Candidate) bool
	// ComputeCommands picks, among candidates the method accepted, what to
	// do now without exceeding r.Budgets. An error means the method could not
	// decide; nothing is executed.
	ComputeCommands(ctx context.Context, r *Round, candidates []*Candidate) (Result, error)
}

// Waiter is a Method whose candidates wait before they are acted on (the
// pool's consolidateAfter).
type Waiter interface {
	// EligibleAt is when the method may act on the candidate it wants.
	EligibleAt(r *Round, c *Candidate) time.Time
}

// Blocker is a Method with blockers of its own beyond those every method
// shares (a consolidation's churn guard).
type Blocker interface {
	// Blocks returns why the method must leave the candidate alone now, or a
	// zero Block.
	Blocks(r *Round, c *Candidate) Block
}

// Paced is a Method that renews nodes rather than saves (drift, return): a
// PodDisruptionBudget that allows no disruption now, but some once its pods
// are healthy again, does not hold its candidates back. Its replacements
// are Initialized, and its pods' homes Ready, before any pod is evicted; the
// drain evicts each pod when its budget allows (the Eviction API refuses
// the others with 429, and the drain retries), as Karpenter paces the
// drains of eventual disruption; a budget that allows none even then still
// blocks.
type Paced interface {
	Method
	// PacedByPDBs marks the method.
	PacedByPDBs()
}

// Validator is a Method whose commands are checked again after a delay,
// before anything is done: the consolidation methods, whose savings depend on
// pods and prices that move.
type Validator interface {
	// Validate re-checks cmd, whose Candidates are as r sees them now: it
	// returns the command to execute (its replacement re-simulated), or
	// false when the world changed so that the command no longer holds.
	Validate(ctx context.Context, r *Round, cmd Command) (Command, bool)
}

// Result is what ComputeCommands decided.
type Result struct {
	// Commands are what to do, in order.
	Commands []Command
	// Blocked are candidates the method wanted but found it could not
	// disrupt (their pods fit nowhere).
	Blocked []Blocked
}

// Round is everything a method decides on.
type Round struct {
	// Snapshot is the cluster state, with the pools' instance types.
	Snapshot *scheduler.Snapshot
	// Now is the round's instant on the controller's clock.
	Now time.Time
	// Pools are the NodePools by name, defaults applied.
	Pools map[string]*v1alpha1.NodePool
	// Budgets are, for the method being asked, each pool's remaining budget.
	Budgets Budgets
	// PDBs are the cluster's PodDisruptionBudgets.
	PDBs []*policyv1.PodDisruptionBudget
	// Busy names the nodes of commands the controller has not finished:
	// they are no candidates, and count against their pools' budgets.
	Busy map[string]bool
	// Cooling is node name -> until when consolidation leaves it alone: a
	// command for it rolled back.
	Cooling map[string]time.Time
	// Settled is each available offering -> since when it has been available
	// at a steady price (zero: for as long as the controller knows); an
	// offering missing is not settled. Nil counts every available offering
	// as settled for ever.
	Settled map[OfferingKey]time.Time
	// memo, when set, keeps what the round's simulations share.
	memo *memo
	// offerings is the key of the pools' offerings (see offeringsKey).
	offerings uint64
}

// Command is what a method decided to do.
type Command struct {
	// ID names the command in logs and events; the Controller sets it.
	ID string
	// Method is the deciding method's name.
	Method string
	// Reason is the method's disruption reason.
	Reason string
	// Candidates are the nodes whose NodeClaims are deleted, in order.
	Candidates []*Candidate
	// Replacements are launched, and must be Initialized, before any
	// candidate is deleted.
	Replacements []*scheduler.NewNodeClaim
	// Savings is the candidates' price per hour less the replacements', in
	// dollars; 0 for a method that renews nodes rather than saving (drift).
	Savings float64
	// Why says, for events and logs, why the candidates move; empty when
	// the method and reason say enough.
	Why string
	// Target is where a return sends the pods; zero for other methods.
	Target Target
}

// Target is the capacity a command moves pods to.
type Target struct {
	NodePool, CapacityType string
}

// Action is "delete" for a command without replacements, "replace" otherwise.
func (c Command) Action() string {
	if len(c.Replacements) == 0 {
		return ActionDelete
	}
	return ActionReplace
}

// Actions a command takes.
const (
	ActionDelete  = "delete"
	ActionReplace = "replace"
)

// Names returns the candidates' node names.
func (c Command) Names() []string {
	out := make([]string, len(c.Candidates))
	for i, cand := range c.Candidates {
		out[i] = cand.Name()
	}
	return out
}
