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

// ZonalShiftActive is 1 while the cluster is shifted away from a zone (an
// ARC zonal shift of the cluster, or an autoshift of the region), by the
// zone's ID: launches avoid the zone until the shift ends.
var ZonalShiftActive = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Namespace: "stowage", Subsystem: "aws", Name: "zonal_shift_active",
	Help: "1 while the cluster is shifted away from the zone (ARC zonal shift or autoshift) and launches avoid it, by zone_id.",
}, []string{"zone_id"})

func init() {
	crmetrics.Registry.MustRegister(LaunchDenials, ZonalShiftActive)
	for _, ct := range []string{"on-demand", "spot", "reserved"} {
		LaunchDenials.WithLabelValues(ct)
	}
}
