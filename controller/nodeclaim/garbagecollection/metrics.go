package garbagecollection

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// LabelVia names how an orphaned instance was collected.
const LabelVia = "via"

// Values of LabelVia.
const (
	// ViaInstance: the instance had no Node and was terminated directly.
	ViaInstance = "instance"
	// ViaNode: its Node was deleted, for the termination controller to drain it first.
	ViaNode = "node"
)

// Collected counts orphaned instances deleted, registered on controller-runtime's registry.
var Collected = prometheus.NewCounterVec(prometheus.CounterOpts{
	Namespace: "stowage", Subsystem: "nodeclaims", Name: "garbage_collected_total",
	Help: "Number of instances deleted because no NodeClaim owned them, by whether their Node or the instance itself was deleted.",
}, []string{LabelVia})

func init() {
	crmetrics.Registry.MustRegister(Collected)
	for _, via := range []string{ViaInstance, ViaNode} {
		Collected.WithLabelValues(via)
	}
}
