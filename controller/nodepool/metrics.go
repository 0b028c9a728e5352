package nodepool

import (
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// Label names of the nodepool metrics.
const (
	LabelNodePool     = "nodepool"
	LabelResourceType = "resource_type"
)

const (
	namespace = "stowage"
	subsystem = "nodepool"
)

// The nodepool metrics, registered on controller-runtime's registry; the
// names are Karpenter's, with Stowage's prefix. Quantities are in base units:
// cores, bytes, pods, nodes.
var (
	// Usage is the pool's status.resources.
	Usage = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "usage",
		Help: "Resources of the NodePool's nodes (the sum of its NodeClaims' capacity, and their count as nodes), by nodepool and resource_type.",
	}, []string{LabelNodePool, LabelResourceType})
	// Limit is the pool's spec.limits.
	Limit = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "limit",
		Help: "Limits of the NodePool's resources from spec.limits, by nodepool and resource_type; a resource without a limit has no series.",
	}, []string{LabelNodePool, LabelResourceType})
)

func init() {
	crmetrics.Registry.MustRegister(Usage, Limit)
}

// observe replaces the pool's usage and limit series.
func observe(pool *v1alpha1.NodePool) {
	forget(pool.Name)
	set(Usage, pool.Name, pool.Status.Resources)
	set(Limit, pool.Name, pool.Spec.Limits)
}

func set(g *prometheus.GaugeVec, pool string, resources corev1.ResourceList) {
	for name, q := range resources {
		g.WithLabelValues(pool, string(name)).Set(q.AsApproximateFloat64())
	}
}

// forget removes a pool's series.
func forget(pool string) {
	Usage.DeletePartialMatch(prometheus.Labels{LabelNodePool: pool})
	Limit.DeletePartialMatch(prometheus.Labels{LabelNodePool: pool})
}
