// Package scheduler is Stowage's scheduling core: a pure, deterministic function
// from a Snapshot of the cluster to Results that say where every pending pod goes
// and which NodeClaims to launch. The controller, the simulator, the schedule
// command and every benchmark drive this one function.
package scheduler

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
)

// Snapshot is everything a decision reads. Solve never changes it.
type Snapshot struct {
	// Pods are the pending pods to place.
	Pods []*corev1.Pod
	// Nodes are the existing nodes and in-flight NodeClaims, with the pods bound to them.
	Nodes     []*StateNode
	NodePools []*v1alpha1.NodePool
	// NodeClasses by name.
	NodeClasses map[string]*v1alpha1.NodeClass
	// InstanceTypes by NodePool name, with their current offerings.
	InstanceTypes          map[string][]*cloudprovider.InstanceType
	DaemonSets             []*appsv1.DaemonSet
	PersistentVolumeClaims []*corev1.PersistentVolumeClaim
	PersistentVolumes      []*corev1.PersistentVolume
	StorageClasses         []*storagev1.StorageClass
	// Expected is, per workload (the UID of a pending pod's controller), how
	// many more of its pods are expected soon: a new claim for its pods is
	// sized for them too, where that makes each pod cheaper, and keeps room
	// for them. Those pods are not placed, nominated or reported.
	Expected map[types.UID]int
	// Now is the decision's instant: a Capacity Block is used only from its
	// start to its end less its pool's capacityBlockLeadTime (blocks.go).
	// Zero leaves every reservation's window open.
	Now time.Time
	// Bookings are room kept for pods that do not exist yet, placed after
	// the real pods (booked.go).
	Bookings []Booking
	// LeftOut are nodes left out of Nodes (a disruption simulation solves on
	// the nodes with room only) that still count toward their pools' limits.
	LeftOut []*StateNode
	// PriorityClasses are the PriorityClasses' values by name, for pods
	// without spec.priority (PodPriority).
	PriorityClasses map[string]int32
	// Requests is the caller's memory of pods' requests; nil for none.
	Requests *RequestMemory
}

// StateNode is a node that exists or is being launched.
type StateNode struct {
	// Node is nil while the NodeClaim has not registered.
	Node *corev1.Node
	// NodeClaim is nil for nodes Stowage does not manage.
	NodeClaim *v1alpha1.NodeClaim
	// Pods bound to the node (or nominated to the in-flight claim), DaemonSet pods included.
	Pods []*corev1.Pod
	// MarkedForDeletion nodes take no new pods, and their pods are about to need a home.
	MarkedForDeletion bool
	// Nominated is set when pods that are not on the node yet are expected to
	// land there (the provisioner chose it for them): it is about to be used,
	// so disruption leaves it alone.
	Nominated bool
	// LastPodEvent is when a pod last bound to the node or left it, as the
	// cluster state saw it; zero when none has since the state started.
	LastPodEvent time.Time
}

// Name is the node's name, or the NodeClaim's while it has no node.
func (n *StateNode) Name() string {
	if n.Node != nil {
		return n.Node.Name
	}
	return n.NodeClaim.Name
}

// Options tune a solve.
type Options struct {
	// Preferences says how soft constraints (preferred affinities, ScheduleAnyway
	// spreads) count: respect, ignore or cost-aware; DefaultPreferencePolicy
	// when empty. Callers parse it with ParsePreferencePolicy; a value that is
	// none of the three solves as the default.
	Preferences PreferencePolicy
	// MinValuesPolicy is Strict (a claim that cannot keep minValues types is not made) or BestEffort.
	MinValuesPolicy MinValuesPolicy
	// MaxInstanceTypes caps each NodeClaim's ranked list (60, CreateFleet's override limit, when zero).
	MaxInstanceTypes int
	// NoKarpenterLabels says that Stowage's nodes do not carry Karpenter's
	// selector labels (stowage run --karpenter-labels=false), so a pod's
	// Karpenter keys are read literally rather than as Stowage's.
	NoKarpenterLabels bool
	// ExplainFallbacks fills Results.Fallbacks: why pods placed on a pool
	// were not placed on one of higher weight (the Terraform plan says it).
	ExplainFallbacks bool
	// FillFloors opens empty claims up to each pool's minNodes (floor.go):
	// the provisioner's decisions do, the simulations of a node's removal
	// (disruption, termination) do not.
	FillFloors bool
	// Bound cuts the solve short between pods (priority.go); nil never does.
	// The provisioner sets one per batch; simulations of a node's removal
	// solve unbounded.
	Bound Bound
}

// MinValuesPolicy says what to do when a requirement's minValues cannot be met.
type MinValuesPolicy string

// MinValues policies.
const (
	MinValuesStrict     MinValuesPolicy = "Strict"
	MinValuesBestEffort MinValuesPolicy = "BestEffort"
)
