package podevents

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// LabelNode says whether the pod event left its node empty: "empty" or "occupied".
const LabelNode = "node"

// Written counts the lastPodEventTime writes.
var Written = prometheus.NewCounterVec(prometheus.CounterOpts{
	Namespace: "stowage", Subsystem: "nodeclaims", Name: "pod_events_written_total",
	Help: "Number of NodeClaim lastPodEventTime writes, by whether the node was left empty (empty, occupied).",
}, []string{LabelNode})

func emptyLabel(empty bool) string {
	if empty {
		return "empty"
	}
	return "occupied"
}

func init() {
	crmetrics.Registry.MustRegister(Written)
	Written.WithLabelValues("empty")
	Written.WithLabelValues("occupied")
}
