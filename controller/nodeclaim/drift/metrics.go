package drift

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Drifted counts the NodeClaims found drifted.
var Drifted = prometheus.NewCounterVec(prometheus.CounterOpts{
	Namespace: "stowage", Subsystem: "nodeclaims", Name: "drifted_total",
	Help: "Number of times a NodeClaim was found drifted, by nodepool and reason (NodePoolDrifted, NodeClassDrifted, RequirementsDrifted, or the cloud's, e.g. ImageDrift).",
}, []string{"nodepool", "reason"})

func init() { crmetrics.Registry.MustRegister(Drifted) }
