package interruption

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// Label names of the interruption metrics.
const (
	LabelKind   = "kind"
	LabelAction = "action"
)

// KindUnknown is the kind label of a mark whose kind is not one of
// v1alpha1.InterruptionKinds.
const KindUnknown = "unknown"

// Values of LabelAction: what the controller did about a mark.
const (
	// ActionReplace: the Node's NodeClaim was deleted.
	ActionReplace = "replace"
	// ActionMarkOffering: a spot or capacity reservation interruption's
	// offering was marked unavailable.
	ActionMarkOffering = "mark_offering"
	// ActionNone: the mark asks for no replacement (a rebalance recommendation
	// without ReplaceOnRebalance, an unknown kind) or the Node is already going.
	ActionNone = "none"
	// ActionNotManaged: no NodeClaim owns the Node; it was left alone.
	ActionNotManaged = "not_managed"
)

const (
	namespace = "stowage"
	subsystem = "interruption"
)

// The interruption metrics, registered on controller-runtime's registry.
var (
	// Received counts marks by kind, once per mark.
	Received = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "received_total",
		Help: "Number of interruption marks received on Nodes, by kind (unknown for a kind the controller does not know).",
	}, []string{LabelKind})
	// Actions counts what was done about marks.
	Actions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "actions_total",
		Help: "Number of actions taken on interruption marks, by action (replace, mark_offering, none, not_managed).",
	}, []string{LabelAction})
	// DeadlineMargin measures how early claims are deleted.
	DeadlineMargin = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "deadline_margin_seconds",
		Help:    "Time left before the interruption deadline when the node's NodeClaim was deleted, in seconds (0 or less: the deadline had passed).",
		Buckets: []float64{0, 15, 30, 60, 90, 105, 120, 300, 900, 3600, 6 * 3600, 24 * 3600, 7 * 24 * 3600},
	})
)

func init() {
	crmetrics.Registry.MustRegister(Received, Actions, DeadlineMargin)
	for _, kind := range append([]string{KindUnknown}, v1alpha1.InterruptionKinds...) {
		Received.WithLabelValues(kind)
	}
	for _, action := range []string{ActionReplace, ActionMarkOffering, ActionNone, ActionNotManaged} {
		Actions.WithLabelValues(action)
	}
}
