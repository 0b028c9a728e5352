package scheduler

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

func sortedStateNodes(nodes []*StateNode) []*StateNode {
	out := slices.Clone(nodes)
	slices.SortStableFunc(out, func(a, b *StateNode) int { return strings.Compare(a.Name(), b.Name()) })
	return out
}

// existingNode prepares a node or in-flight claim, returning it and its bound pods.
// Nodes marked for deletion, or that kube-scheduler would not bind to (see
// takesPods), take no pods (nil), but their pods still count for topology.
func (sv *solver) existingNode(sn *StateNode) (*node, []*corev1.Pod) {
	n := &node{index: len(sv.nodes), name: sn.Name()}
	var allocatable scheduling.Resources
	switch {
	case sn.Node != nil:
		n.labels = sn.Node.Labels
		n.taints = nodeTaints(sn)
		allocatable = scheduling.FromList(sn.Node.Status.Allocatable)
	default:
		n.labels = scheduling.FromAPI(sn.NodeClaim.Spec.Requirements).Labels()
		for k, v := range sn.NodeClaim.Labels {
			n.labels[k] = v
		}
		n.taints = sn.NodeClaim.Spec.Taints
		allocatable = sv.inflightAllocatable(sn.NodeClaim)
	}
	if n.labels == nil {
		n.labels = map[string]string{}
	}
	// A pod matches the node's labels as written, as kube-scheduler matches
	// them; its topology domains are read through Karpenter's keys too.
	n.reqs = scheduling.FromLabels(n.labels)
	n.labels = sv.keys.nodeLabels(n.labels)
	var used scheduling.Resources
	for _, pod := range sn.Pods {
		if isTerminal(pod) {
			continue
		}
		used = used.Add(sv.snapshot.Requests.Of(pod))
		n.ports.Add(scheduling.PodHostPorts(pod))
	}
	n.available = allocatable.Sub(used).Sub(sv.unboundDaemonSets(sn, n))
	if sn.MarkedForDeletion || hasTaint(n.taints, v1alpha1.TaintKeyDisrupted) || !takesPods(sn) {
		n.available = scheduling.Resources{}
	}
	sv.nodes = append(sv.nodes, n)
	sv.existing++
	return n, sn.Pods
}

// inflightAllocatable is what a launched claim reported, or else what the smallest
// of its possible instance types guarantees, whichever the launch picks.
func (sv *solver) inflightAllocatable(nc *v1alpha1.NodeClaim) scheduling.Resources {
	if len(nc.Status.Allocatable) > 0 {
		return scheduling.FromList(nc.Status.Allocatable)
	}
	var out *scheduling.Resources
	for _, it := range sv.claimTypes(nc) {
		a := it.Allocatable()
		if out == nil {
			out = &a
			continue
		}
		m := minResources(*out, a)
		out = &m
	}
	if out == nil {
		return scheduling.FromList(nc.Spec.Resources.Requests)
	}
	return *out
}

func minResources(a, b scheduling.Resources) scheduling.Resources {
	out := scheduling.Resources{CPU: min(a.CPU, b.CPU), Memory: min(a.Memory, b.Memory),
		EphemeralStorage: min(a.EphemeralStorage, b.EphemeralStorage), Pods: min(a.Pods, b.Pods)}
	for _, e := range a.Extended {
		out.Set(e.Name, min(e.Value, b.Get(e.Name)))
	}
	return out
}

func hasTaint(taints []corev1.Taint, key string) bool {
	return slices.ContainsFunc(taints, func(t corev1.Taint) bool { return t.Key == key })
}

func isTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// stateNodeCapacity is what a node or claim counts against its pool's limits:
// a node's capacity, a launched claim's, and for a claim not launched yet the
// largest capacity, resource by resource, of the instance types it allows,
// since the launch may fall back to any of them (its pods' requests when none
// of its types is known). The checker counts the same on its own.
func (sv *solver) stateNodeCapacity(sn *StateNode) scheduling.Resources {
	switch {
	case sn.Node != nil:
		return scheduling.FromList(sn.Node.Status.Capacity)
	case len(sn.NodeClaim.Status.Capacity) > 0:
		return scheduling.FromList(sn.NodeClaim.Status.Capacity)
	}
	var worst scheduling.Resources
	found := false
	for _, it := range sv.claimTypes(sn.NodeClaim) {
		worst, found = worst.Max(it.Capacity), true
	}
	if !found {
		return scheduling.FromList(sn.NodeClaim.Spec.Resources.Requests)
	}
	return worst
}

// claimTypes are the instance types of the claim's pool that its
// requirements allow by name.
func (sv *solver) claimTypes(nc *v1alpha1.NodeClaim) []*cloudprovider.InstanceType {
	names := scheduling.FromAPI(nc.Spec.Requirements).Get(corev1.LabelInstanceTypeStable)
	var out []*cloudprovider.InstanceType
	for _, it := range sv.snapshot.InstanceTypes[nc.Labels[v1alpha1.LabelNodePool]] {
		if names.Has(it.Name) {
			out = append(out, it)
		}
	}
	return out
}
