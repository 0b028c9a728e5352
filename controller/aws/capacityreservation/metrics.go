package capacityreservation

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Labels of the reservation metrics.
const (
	LabelReservation  = "capacity_reservation"
	LabelType         = "type"
	LabelInstanceType = "instance_type"
	LabelZone         = "zone"
)

var reservationLabels = []string{LabelReservation, LabelType, LabelInstanceType, LabelZone}

var (
	// Available is how many more instances each reservation takes, as
	// Stowage counts them between refreshes. Registered on controller-runtime's registry.
	Available = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "stowage", Subsystem: "capacity_reservations", Name: "available",
		Help: "Number of instances each capacity reservation (On-Demand Capacity Reservation or Capacity Block) the account shows still takes, " +
			"as Stowage counts its launches between refreshes; 0 for a block not started yet.",
	}, reservationLabels)
	// Total is how many instances each reservation holds.
	Total = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "stowage", Subsystem: "capacity_reservations", Name: "total",
		Help: "Number of instances each capacity reservation holds, used or not.",
	}, reservationLabels)
	// EndTime is when each reservation that ends (every Capacity Block) ends.
	EndTime = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "stowage", Subsystem: "capacity_reservations", Name: "end_time_seconds",
		Help: "Unix time at which each capacity reservation that ends (every Capacity Block) ends; absent for one that runs until cancelled.",
	}, reservationLabels)
)

func init() {
	crmetrics.Registry.MustRegister(Available, Total, EndTime)
}

func labels(r Reservation) prometheus.Labels {
	return prometheus.Labels{LabelReservation: r.ID, LabelType: r.Type, LabelInstanceType: r.InstanceType, LabelZone: r.Zone}
}

// record sets one reservation's series.
func record(r Reservation) {
	Available.With(labels(r)).Set(float64(r.Available))
	Total.With(labels(r)).Set(float64(r.Total))
	if !r.End.IsZero() {
		EndTime.With(labels(r)).Set(float64(r.End.Unix()))
	}
}

// recordAll replaces every reservation's series with a refresh's, so that a
// reservation gone (expired, cancelled) leaves none behind.
func recordAll(byID map[string]Reservation) {
	Available.Reset()
	Total.Reset()
	EndTime.Reset()
	for _, r := range byID {
		record(r)
	}
}
