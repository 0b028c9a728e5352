package buildinfo

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Info is 1, labelled with the running build's version and commit, so that
// a dashboard can tell which release each replica runs.
var Info = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Namespace: "stowage", Name: "build_info",
	Help: "Always 1; its labels are the version and the commit the running stowage binary was built from.",
}, []string{"version", "commit"})

func init() {
	crmetrics.Registry.MustRegister(Info)
	Info.WithLabelValues(Version(), Commit()).Set(1)
}
