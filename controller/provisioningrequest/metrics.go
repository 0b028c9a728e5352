package provisioningrequest

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Outcomes counts requests coming to Provisioned, Failed, BookingExpired or
// CapacityRevoked. Registered on controller-runtime's registry.
var Outcomes = prometheus.NewCounterVec(prometheus.CounterOpts{
	Namespace: "stowage", Subsystem: "provisioning_request", Name: "outcomes_total",
	Help: "ProvisioningRequests that became Provisioned, Failed, BookingExpired or CapacityRevoked (condition), by class and the condition's reason.",
}, []string{"class", "condition", "reason"})

func init() { crmetrics.Registry.MustRegister(Outcomes) }
