package capacityblock

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Left counts the nodes moved off a Capacity Block ahead of its end.
var Left = prometheus.NewCounterVec(prometheus.CounterOpts{
	Namespace: "stowage", Subsystem: "nodeclaims", Name: "capacity_block_ended_total",
	Help: "Number of NodeClaims in a Capacity Block moved off it (the node marked for replacement, or a claim with no node deleted) " +
		"their pool's capacityBlockLeadTime before the block ends, by nodepool.",
}, []string{"nodepool"})

func init() { crmetrics.Registry.MustRegister(Left) }
