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
)

// The disruption metrics, registered on controller-runtime's registry.
var (
	// Disrupted counts the NodeClaims the controller deleted.
	Disrupted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "stowage", Subsystem: "nodeclaims", Name: "disrupted_total",
		Help: "Number of NodeClaims the disruption controller deleted, by nodepool and disruption reason (Empty, ...).",
	}, []string{LabelNodePool, LabelReason})
	// AllowedDisruptions is each pool's budget as last evaluated.
	AllowedDisruptions = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "stowage", Subsystem: "disruption", Name: "budgets_allowed_disruptions",
		Help: "Number of nodes of the nodepool that may be disrupted now for the reason, once the nodes already being disrupted are counted; 2147483647 when no budget applies.",
	}, []string{LabelNodePool, LabelReason})
	// EvaluationDuration times one method's decision on one snapshot.
	EvaluationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "stowage", Subsystem: "disruption", Name: "decision_evaluation_duration_seconds",
		Help:    "Time one disruption method took to decide on one snapshot of the cluster, in seconds, by method, as the controller's clock measures it.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
	}, []string{LabelMethod})
)

func init() {
	crmetrics.Registry.MustRegister(Disrupted, AllowedDisruptions, EvaluationDuration)
}
