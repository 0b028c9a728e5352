package expiration

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Expired counts the NodeClaims deleted at their expiry.
var Expired = prometheus.NewCounterVec(prometheus.CounterOpts{
	Namespace: "stowage", Subsystem: "nodeclaims", Name: "expired_total",
	Help: "Number of NodeClaims deleted because they reached their expireAfter, by nodepool.",
}, []string{"nodepool"})

func init() { crmetrics.Registry.MustRegister(Expired) }
