package termination

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Label names of the termination metrics.
const (
	LabelNodePool = "nodepool"
	LabelOutcome  = "outcome"
)

// Values of LabelOutcome: what became of a pod the drain moved.
const (
	// OutcomeEvicted: the Eviction API accepted the eviction.
	OutcomeEvicted = "evicted"
	// OutcomeRefused: the Eviction API answered 429 (a PDB); it is retried.
	OutcomeRefused = "refused"
	// OutcomeDeleted: the termination grace period ran out and the pod was deleted.
	OutcomeDeleted = "deleted"
)

// The termination metrics, registered on controller-runtime's registry.
var (
	// Terminated counts NodeClaims whose instance and Node are gone.
	Terminated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "stowage", Subsystem: "nodeclaims", Name: "terminated_total",
		Help: "Number of NodeClaims whose node was drained, whose instance was terminated and whose finalizer was removed, by nodepool.",
	}, []string{LabelNodePool})
	// NodesTerminated counts Nodes removed after their instance was terminated.
	NodesTerminated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "stowage", Subsystem: "nodes", Name: "terminated_total",
		Help: "Number of Nodes deleted after being drained and having their instance terminated, by nodepool (empty for a Node no NodeClaim owned).",
	}, []string{LabelNodePool})
	// Evictions counts the drain's eviction attempts by outcome.
	Evictions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "stowage", Subsystem: "termination", Name: "evictions_total",
		Help: "Number of pod evictions the drain attempted, by outcome (evicted, refused by a PDB, deleted at the end of the grace period).",
	}, []string{LabelOutcome})
	// Duration measures deletion to finalizer removal.
	Duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "stowage", Subsystem: "nodeclaims", Name: "termination_duration_seconds",
		Help:    "Time from a NodeClaim's deletion to its finalizer's removal, in seconds, by nodepool.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 14),
	}, []string{LabelNodePool})
)

func init() {
	crmetrics.Registry.MustRegister(Terminated, NodesTerminated, Evictions, Duration)
	for _, outcome := range []string{OutcomeEvicted, OutcomeRefused, OutcomeDeleted} {
		Evictions.WithLabelValues(outcome)
	}
}
