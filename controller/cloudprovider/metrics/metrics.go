// Package metrics instruments any CloudProvider with Prometheus metrics through
// a decorator, so every cloud is measured the same way and in one place.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Label names of the cloud provider metrics.
const (
	LabelMethod   = "method"
	LabelProvider = "provider"
	LabelError    = "error"
)

// Error label values: the kind of error a call returned.
const (
	ErrorNone                 = ""
	ErrorInsufficientCapacity = "insufficient_capacity"
	ErrorNodeClaimNotFound    = "nodeclaim_not_found"
	ErrorNodeClassNotReady    = "nodeclass_not_ready"
	ErrorCreate               = "create"
	ErrorOther                = "other"
)

const (
	namespace = "stowage"
	subsystem = "cloudprovider"
)

// Metrics are the collectors the decorator records into.
type Metrics struct {
	// Duration is the latency of each CloudProvider call.
	Duration *prometheus.HistogramVec
	// Errors counts failed calls by method and error kind.
	Errors *prometheus.CounterVec
}

// New builds the collectors and registers them with reg (when not nil).
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Subsystem: subsystem, Name: "duration_seconds",
			Help:    "Duration of cloud provider calls in seconds, by method.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
		}, []string{LabelMethod, LabelProvider}),
		Errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: subsystem, Name: "errors_total",
			Help: "Number of cloud provider calls that returned an error, by method and error kind.",
		}, []string{LabelMethod, LabelProvider, LabelError}),
	}
	if reg != nil {
		reg.MustRegister(m.Duration, m.Errors)
	}
	return m
}
