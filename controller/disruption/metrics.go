package disruption

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Label names of the disruption metrics.
const (
	LabelNodePool = "nodepool"
	LabelReason   = "reason"
	LabelMethod   = "method"
	LabelAction   = "action"
	LabelResult   = "result"
	LabelBlocker  = "blocker"
	LabelDecision = "decision"
	// LabelCapacityType, LabelToNodePool and LabelToCapacityType say where
	// a return moved a node's pods from and to.
	LabelCapacityType   = "capacity_type"
	LabelToNodePool     = "to_nodepool"
	LabelToCapacityType = "to_capacity_type"
)

// Values of the commands metric's result label.
const (
	// ResultValidated: a command passed its validation after the delay.
	ResultValidated = "validated"
	// ResultDropped: validation found the world changed; nothing was done.
	ResultDropped = "dropped"
	// ResultStarted: the command's replacements were launched and its nodes
	// tainted.
	ResultStarted = "started"
	// ResultSucceeded: the command's NodeClaims were deleted.
	ResultSucceeded = "succeeded"
	// ResultFailed: a replacement failed and the command was rolled back, or
	// no deletion went through.
	ResultFailed = "failed"
)

// Values of the consolidation score's decision label.
const (
	DecisionApproved = "approved"
	DecisionRejected = "rejected"
)

// The disruption metrics, registered on controller-runtime's registry.
var (
	// Disrupted counts the NodeClaims the controller deleted.
	Disrupted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "stowage", Subsystem: "nodeclaims", Name: "disrupted_total",
		Help: "Number of NodeClaims the disruption controller deleted, by nodepool and disruption reason (Empty, Underutilized, Drifted, Fallback).",
	}, []string{LabelNodePool, LabelReason})
	// AllowedDisruptions is each pool's budget as last evaluated.
	AllowedDisruptions = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "stowage", Subsystem: "disruption", Name: "budgets_allowed_disruptions",
		Help: "Number of nodes of the nodepool that may be disrupted now for the reason, once the nodes already being disrupted are counted; 2147483647 when no budget applies.",
	}, []string{LabelNodePool, LabelReason})
	// EvaluationDuration times one method's decision on one round.
	EvaluationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "stowage", Subsystem: "disruption", Name: "decision_evaluation_duration_seconds",
		Help:    "Time one disruption method took to decide on one snapshot of the cluster, in seconds, by method, as the controller's clock measures it.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
	}, []string{LabelMethod})
	// Decisions counts the commands the methods decided.
	Decisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "stowage", Subsystem: "disruption", Name: "decisions_total",
		Help: "Number of disruption commands decided, by method, disruption reason and action (delete or replace), before validation.",
	}, []string{LabelMethod, LabelReason, LabelAction})
	// EligibleNodes is how many candidates each method could act on.
	EligibleNodes = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "stowage", Subsystem: "disruption", Name: "eligible_nodes",
		Help: "Number of nodes the method wanted to disrupt and could act on at its last round, before budgets, by method.",
	}, []string{LabelMethod})
	// Commands counts what became of the commands.
	Commands = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "stowage", Subsystem: "disruption", Name: "commands_total",
		Help: "Number of disruption commands by method and result: validated, dropped (the world changed during validation), started, succeeded, failed (rolled back).",
	}, []string{LabelMethod, LabelResult})
	// BlockedCandidates is how many candidates each blocker holds back.
	BlockedCandidates = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "stowage", Subsystem: "disruption", Name: "blocked_candidates",
		Help: "Number of nodes a method wanted to disrupt but may not now, at its last round, by method and blocker (do-not-disrupt, pdb, nominated, just-ready, budget, unschedulable, churn).",
	}, []string{LabelMethod, LabelBlocker})
	// FleetCost is what each pool's nodes cost.
	FleetCost = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "stowage", Subsystem: "disruption", Name: "fleet_cost_per_hour_dollars",
		Help: "Hourly price, in dollars, of the nodes of the nodepool Stowage manages, at the offering each runs on, as of the last round.",
	}, []string{LabelNodePool})
	// Returns counts the nodes moved back to preferred capacity.
	Returns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "stowage", Subsystem: "disruption", Name: "returns_total",
		Help: "Number of nodes on a fallback the return method removed once their pods' preferred capacity was back, by the nodepool and capacity type they ran on and the nodepool and capacity type their pods moved to.",
	}, []string{LabelNodePool, LabelCapacityType, LabelToNodePool, LabelToCapacityType})
	// ConsolidationScores are the scores of the moves Balanced pools weighed.
	ConsolidationScores = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "stowage", Subsystem: "disruption", Name: "consolidation_score",
		Help:    "Scores of the consolidation moves weighed in nodepools whose consolidationPolicy is Balanced (the share of the pool's cost saved over the share of its disruption cost caused; approved from 0.5), by nodepool and decision (approved or rejected).",
		Buckets: []float64{0.1, 0.25, 0.33, 0.5, 1, 2, 5, 10},
	}, []string{LabelNodePool, LabelDecision})
	// Savings adds up what the executed commands save.
	Savings = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "stowage", Subsystem: "disruption", Name: "savings_per_hour_dollars_total",
		Help: "Sum of the hourly savings, in dollars, of the executed consolidation commands (removed nodes' price less their replacements'), by nodepool and method; never negative, drift books none.",
	}, []string{LabelNodePool, LabelMethod})
)

func init() {
	crmetrics.Registry.MustRegister(Disrupted, AllowedDisruptions, EvaluationDuration, Decisions, EligibleNodes, Commands,
		BlockedCandidates, FleetCost, Savings, Returns, ConsolidationScores)
	for _, m := range NewMethods(ConsolidationOptions{}) {
		for _, result := range []string{ResultValidated, ResultDropped, ResultStarted, ResultSucceeded, ResultFailed} {
			Commands.WithLabelValues(m.Name(), result)
		}
	}
}
