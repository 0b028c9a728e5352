package lifecycle

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Label names of the lifecycle metrics.
const (
	LabelNodePool     = "nodepool"
	LabelCapacityType = "capacity_type"
	LabelInstanceType = "instance_type"
	LabelReason       = "reason"
	LabelPhase        = "phase"
	LabelResource     = "resource"
)

const (
	namespace = "stowage"
	subsystem = "nodeclaims"
)

// The lifecycle metrics, registered on controller-runtime's registry. Their
// series are labelled by nodepool, which is not known ahead, so they are not
// pre-initialised.
var (
	// Created counts claims whose instance was launched.
	Created = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "created_total",
		Help: "Number of NodeClaims whose instance was launched, by nodepool, capacity type and instance type.",
	}, []string{LabelNodePool, LabelCapacityType, LabelInstanceType})
	// LaunchFailures counts failed Create calls by the reason set on the claim.
	LaunchFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "launch_failures_total",
		Help: "Number of failed instance launches for NodeClaims, by nodepool and reason (InsufficientCapacity, NodeClassNotReady, a CreateError reason, or LaunchError).",
	}, []string{LabelNodePool, LabelReason})
	// Registered counts claims paired with their Node.
	Registered = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "registered_total",
		Help: "Number of NodeClaims whose Node registered, by nodepool.",
	}, []string{LabelNodePool})
	// Initialized counts claims whose Node became usable.
	Initialized = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "initialized_total",
		Help: "Number of NodeClaims whose Node became Ready with its startup taints gone and its resources registered, by nodepool.",
	}, []string{LabelNodePool})
	// AllocatableMismatch counts the resources whose allocatable on a Node
	// differs from what was predicted at launch, checked at initialization.
	AllocatableMismatch = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "allocatable_mismatch_total",
		Help: "Number of resources whose allocatable on a NodeClaim's initialized Node differs from the allocatable predicted at launch (status.allocatable), by resource and nodepool.",
	}, []string{LabelResource, LabelNodePool})
	// TimedOut counts claims deleted because launch or registration took too long.
	TimedOut = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "timed_out_total",
		Help: "Number of NodeClaims deleted because their launch or their Node's registration timed out, by nodepool and phase.",
	}, []string{LabelNodePool, LabelPhase})
	// StartupDuration measures launch to Initialized.
	StartupDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "startup_duration_seconds",
		Help:    "Time from a NodeClaim's instance launch to its Node being initialized, in seconds, by nodepool.",
		Buckets: prometheus.ExponentialBuckets(5, 1.5, 12),
	}, []string{LabelNodePool})
)

func init() {
	crmetrics.Registry.MustRegister(Created, LaunchFailures, Registered, Initialized, AllocatableMismatch, TimedOut, StartupDuration)
}
