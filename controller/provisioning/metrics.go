package provisioning

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/stowage-dev/stowage/controller/cloudprovider"
)

// Label names of the provisioning metrics.
const (
	labelInstanceType = "instance_type"
	labelCapacityType = "capacity_type"
	labelZone         = "zone"
	labelNodePool     = "nodepool"
)

var (
	// SchedulingDuration is how long one batch's solve took, by the injected clock.
	SchedulingDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "stowage", Subsystem: "provisioner", Name: "scheduling_duration_seconds",
		Help:    "Time the scheduling simulation of one provisioning batch took.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
	})
	// UnschedulablePods is how many pods the last batch could place nowhere.
	UnschedulablePods = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: "stowage", Subsystem: "scheduler", Name: "unschedulable_pods_count",
		Help: "Pods the last provisioning batch could not place on any node or new NodeClaim.",
	})
	// StateSynced is 1 when the cluster state was synced at the last batch.
	StateSynced = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: "stowage", Subsystem: "cluster_state", Name: "synced",
		Help: "1 when the cluster state was synced at the last provisioning batch, else 0.",
	})
	// OfferingAvailable is 1 for an offering the cloud can launch now, 0 for one it remembers short.
	OfferingAvailable = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "stowage", Subsystem: "cloudprovider", Name: "instance_type_offering_available",
		Help: "1 when the offering (instance type, capacity type, zone) is available to launch, 0 while it is remembered short.",
	}, []string{labelInstanceType, labelCapacityType, labelZone})
	// OfferingPrice is each offering's estimated hourly price.
	OfferingPrice = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "stowage", Subsystem: "cloudprovider", Name: "instance_type_offering_price_estimate",
		Help: "Estimated hourly price of the offering (instance type, capacity type, zone), in US dollars.",
	}, []string{labelInstanceType, labelCapacityType, labelZone})
	// SolvesCut counts the batches whose solve its time bound cut short.
	SolvesCut = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "stowage", Subsystem: "provisioner", Name: "solves_cut_total",
		Help: "Provisioning batches whose solve reached --solve-time-bound before every pod was tried; the rest waited for the next batch.",
	})
	// DryRunNodeClaims counts the NodeClaims a dry run would have created.
	DryRunNodeClaims = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "stowage", Subsystem: "provisioner", Name: "dry_run_nodeclaims_total",
		Help: "NodeClaims stowage run --dry-run would have created, by pool, first instance type, zone and capacity type.",
	}, []string{labelNodePool, labelInstanceType, labelZone, labelCapacityType})
)

func init() {
	crmetrics.Registry.MustRegister(SchedulingDuration, UnschedulablePods, StateSynced, OfferingAvailable, OfferingPrice, DryRunNodeClaims, SolvesCut)
}

// recordOfferings publishes the offerings of the types a batch saw.
func recordOfferings(types map[string][]*cloudprovider.InstanceType) {
	for _, its := range types {
		for _, it := range its {
			for _, o := range it.Offerings {
				available := 0.0
				if o.Available {
					available = 1
				}
				OfferingAvailable.WithLabelValues(it.Name, o.CapacityType, o.Zone).Set(available)
				OfferingPrice.WithLabelValues(it.Name, o.CapacityType, o.Zone).Set(o.Price)
			}
		}
	}
}
