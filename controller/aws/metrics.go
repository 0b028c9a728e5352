package aws

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// LabelCapacityType names the capacity type a series is about.
const LabelCapacityType = "capacity_type"

// LaunchDenials counts the offerings a fleet could not launch because IAM
// denied the controller (UnauthorizedOperation in the fleet's errors); each
// is avoided for a while, as a shortage is. Registered on
// controller-runtime's registry.
var LaunchDenials = prometheus.NewCounterVec(prometheus.CounterOpts{
	Namespace: "stowage", Subsystem: "aws", Name: "launch_denials_total",
	Help: "Number of offerings a fleet could not launch because IAM denied the controller, by capacity_type.",
}, []string{LabelCapacityType})

func init() {
	crmetrics.Registry.MustRegister(LaunchDenials)
	for _, ct := range []string{"on-demand", "spot", "reserved"} {
		LaunchDenials.WithLabelValues(ct)
	}
}
