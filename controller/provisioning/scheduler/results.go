package scheduler

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// Results is a decision: new NodeClaims, placements on existing capacity, and the
// pods that cannot be placed, each with its reason. Every list is in a
// deterministic order.
type Results struct {
	NewNodeClaims []*NewNodeClaim
	// Existing are the pods placed on existing nodes or in-flight NodeClaims.
	Existing      []Placement
	Unschedulable []Unschedulable
	// Waiting are the pods the solve did not reach before Options.Bound cut
	// it short, each with that reason: they wait for the next batch.
	Waiting []Unschedulable
	// Order lists every placed pod in the order the decision placed it. Topology
	// spread holds for each pod against the pods placed before it, which is how
	// kube-scheduler checks it as the pods bind.
	Order []*corev1.Pod
	// Fallbacks are set when Options.ExplainFallbacks is.
	Fallbacks []Fallback
	// Bookings say, per booking of the snapshot, where its virtual pods
	// went; the pods themselves are among the placements above, marked
	// (IsVirtual).
	Bookings []BookingResult
}

// NewNodeClaim is a node to launch.
type NewNodeClaim struct {
	// Name is a placeholder hostname, unique within the decision.
	Name     string
	NodePool string
	// Requirements the launch must satisfy: the pool's, narrowed by the pods
	// (zone, capacity type, ...), with the instance types listed in InstanceTypes.
	Requirements scheduling.Requirements
	// InstanceTypes that fit every pod, cheapest first: the launch falls back down the list.
	InstanceTypes []*cloudprovider.InstanceType
	Pods          []*corev1.Pod
	// Requests are the pods' requests plus the DaemonSet pods expected on the node.
	Requests scheduling.Resources
	// DaemonSetRequests are the DaemonSet part of Requests for the cheapest type.
	DaemonSetRequests scheduling.Resources
	// Offering is the cheapest offering of the first instance type.
	Offering cloudprovider.Offering
	// Anticipated is how many expected pods (Snapshot.Expected) the claim
	// keeps room for beyond its own.
	Anticipated int
}

// Price is the hourly price of the cheapest offering.
func (n *NewNodeClaim) Price() float64 { return n.Offering.Price }

// Placement is a pod placed on an existing node or in-flight NodeClaim.
type Placement struct {
	Pod  *corev1.Pod
	Node string
}

// Unschedulable is a pod no capacity can take, with the reason for each pool.
type Unschedulable struct {
	Pod    *corev1.Pod
	Reason string
}

// TotalPrice is the hourly price of every new NodeClaim.
func (r *Results) TotalPrice() float64 {
	var total float64
	for _, nc := range r.NewNodeClaims {
		total += nc.Price()
	}
	return total
}

// PodCount is the number of pods the decision placed.
func (r *Results) PodCount() int {
	n := len(r.Existing)
	for _, nc := range r.NewNodeClaims {
		n += len(nc.Pods)
	}
	return n
}
