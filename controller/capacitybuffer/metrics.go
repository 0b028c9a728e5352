package capacitybuffer

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Chunks is how many chunks each CapacityBuffer keeps room for.
// Registered on controller-runtime's registry.
var Chunks = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Namespace: "stowage", Subsystem: "capacity_buffer", Name: "replicas",
	Help: "Number of chunks each CapacityBuffer keeps room for (its status.replicas): what its spec asks for, within the namespace's resource quotas.",
}, []string{"namespace", "name"})

func init() { crmetrics.Registry.MustRegister(Chunks) }
