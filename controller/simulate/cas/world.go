package cas

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/scheduling"
)

// World is the cluster and cloud the model acts on; the simulator implements it.
//
// Pods should carry their controller's OwnerReference (ReplicaSet, Job, ...):
// like CA, the model never moves a pod without one, so a node running such a
// pod is never scaled down; DaemonSet-owned pods are ignored by scale-up and
// scale-down. Returning the same *corev1.Pod for a pod from call to call lets
// the model reuse its per-pod work; its scheduling fields must not change.
type World interface {
	// Unschedulable returns the pods the scheduler could not place on the
	// Ready nodes as they are now.
	Unschedulable() []*corev1.Pod
	// Nodes returns every node, including instances launched for a group that
	// are not Ready yet: a launched instance must appear here (Ready false) from
	// the next call after Launch returns it.
	Nodes() []Node
	// Launch asks for count instances of group in zone and returns how many it
	// launched. When the cloud is short it returns the launched count with a
	// *cloudprovider.InsufficientCapacityError; any other error is a launch
	// failure. Either way the group is backed off when the ASG ends up short.
	Launch(ctx context.Context, group *NodeGroup, zone string, count int) (launched int, err error)
	// Remove drains (evicts every pod) and deletes a node. An error counts as
	// a failed scale-down.
	Remove(ctx context.Context, nodeName string) error
}

// Node is the model's view of one node or launched instance.
type Node struct {
	Name string
	// Group is the NodeGroup name; a node of no known group is never removed
	// and is seen as unlabelled and untainted.
	Group string
	Zone  string
	// Allocatable must include the pod count (Resources.Pods).
	Allocatable scheduling.Resources
	// Requested is the sum of the requests of Pods, DaemonSet pods included.
	Requested scheduling.Resources
	Pods      []*corev1.Pod
	// Ready is false from launch until the node is Ready.
	Ready bool
	// CreatedAt is the launch time; a node not Ready this long after it is
	// timed out (MaxNodeProvisionTime), so it must be set.
	CreatedAt time.Time
}
