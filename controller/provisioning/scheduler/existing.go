package scheduler

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// ephemeralTaints are taints a node sheds on its own as it comes up; they do not
// keep the solver from counting on it.
var ephemeralTaints = []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable, v1alpha1.TaintKeyUnregistered}

func sortedStateNodes(nodes []*StateNode) []*StateNode {
	out := slices.Clone(nodes)
	slices.SortStableFunc(out, func(a, b *StateNode) int { return strings.Compare(a.Name(), b.Name()) })
	return out
}

// existingNode prepares a node or in-flight claim, returning it and its bound pods.
// Nodes marked for deletion take no pods (nil), but their pods still count for topology.
func (sv *solver) existingNode(sn *StateNode) (*node, []*corev1.Pod) {
	n := &node{index: len(sv.nodes), name: sn.Name()}
	var allocatable scheduling.Resources
	var startup []corev1.Taint
	if sn.NodeClaim != nil {
		startup = sn.NodeClaim.Spec.StartupTaints
	}
	switch {
	case sn.Node != nil:
		n.labels = sn.Node.Labels
		n.taints = withoutTaints(sn.Node.Spec.Taints, startup)
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
		used = used.Add(scheduling.PodRequests(pod))
		n.ports.Add(scheduling.PodHostPorts(pod))
	}
	n.available = allocatable.Sub(used)
	if sn.MarkedForDeletion || hasTaint(n.taints, v1alpha1.TaintKeyDisrupted) {
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
	names := scheduling.FromAPI(nc.Spec.Requirements).Get(corev1.LabelInstanceTypeStable)
	var out *scheduling.Resources
	for _, it := range sv.snapshot.InstanceTypes[nc.Labels[v1alpha1.LabelNodePool]] {
		if !names.Has(it.Name) {
			continue
		}
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

func withoutTaints(taints, drop []corev1.Taint) []corev1.Taint {
	return slices.DeleteFunc(slices.Clone(taints), func(t corev1.Taint) bool {
		if slices.Contains(ephemeralTaints, t.Key) {
			return true
		}
		return slices.ContainsFunc(drop, func(d corev1.Taint) bool { return d.MatchTaint(&t) })
	})
}

func hasTaint(taints []corev1.Taint, key string) bool {
	return slices.ContainsFunc(taints, func(t corev1.Taint) bool { return t.Key == key })
}

func isTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// stateNodeCapacity is what a node or claim counts against its pool's limits.
func stateNodeCapacity(sn *StateNode) scheduling.Resources {
	switch {
	case sn.Node != nil:
		return scheduling.FromList(sn.Node.Status.Capacity)
	case len(sn.NodeClaim.Status.Capacity) > 0:
		return scheduling.FromList(sn.NodeClaim.Status.Capacity)
	}
	return scheduling.FromList(sn.NodeClaim.Spec.Resources.Requests)
}
