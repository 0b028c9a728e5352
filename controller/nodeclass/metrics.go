package nodeclass

import (
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// LabelNodeClass names the NodeClass a series is about.
const LabelNodeClass = "nodeclass"

const (
	namespace = "stowage"
	subsystem = "nodeclass"
)

// Ready is 1 for a NodeClass whose Ready condition is True and 0 otherwise;
// a deleted NodeClass's series is removed. Registered on controller-runtime's
// registry.
var Ready = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Namespace: namespace, Subsystem: subsystem, Name: "ready",
	Help: "Whether the NodeClass's Ready condition is True (1) or not (0), by nodeclass.",
}, []string{LabelNodeClass})

func init() {
	crmetrics.Registry.MustRegister(Ready)
}

// observe records the NodeClass's Ready condition.
func observe(name string, ready *metav1.Condition) {
	v := 0.0
	if ready != nil && ready.Status == metav1.ConditionTrue {
		v = 1
	}
	Ready.WithLabelValues(name).Set(v)
}

// forget removes a deleted NodeClass's series.
func forget(name string) { Ready.DeleteLabelValues(name) }
