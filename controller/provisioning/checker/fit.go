package checker

import (
	"cmp"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/cloudprovider"
)

// sortedKeys returns a map's keys in order.
func sortedKeys[M ~map[K]V, K cmp.Ordered, V any](m M) []K {
	return slices.Sorted(maps.Keys(m))
}

// checkResources verifies every node's allocatable covers its pods; for a new
// claim, every listed instance type must cover its pods plus the DaemonSet pods
// that would run on it.
func (c *checker) checkResources() {
	for _, n := range c.nodes {
		if n.isNew() {
			c.checkClaimResources(n)
			continue
		}
		c.checkExistingResources(n)
	}
}

func (c *checker) checkExistingResources(n *node) {
	need, placed := res{}, false
	for _, at := range n.pods {
		need.add(podRequests(at.pod))
		placed = placed || at.placed
	}
	if !placed || n.allocatable == nil {
		return
	}
	if name, over := exceeding(need, n.allocatable); over {
		c.report(nil, n.name, ConstraintResources, "node allocatable %s %s < %s requested by its bound and placed pods",
			name, quantity(name, n.allocatable[name]), quantity(name, need[name]))
	}
}

func (c *checker) checkClaimResources(n *node) {
	pods := res{}
	for _, at := range n.pods {
		pods.add(podRequests(at.pod))
	}
	for _, it := range n.claim.InstanceTypes {
		ds := c.daemonSetPeak(n, it)
		need := pods.clone()
		need.add(ds)
		alloc := c.allocatableOf(it)
		if name, over := exceeding(need, alloc); over {
			c.report(nil, n.name, ConstraintResources, "instance type %s allocatable %s %s < %s requested (pods %s + daemonsets %s)",
				it.Name, name, quantity(name, alloc[name]), quantity(name, need[name]), quantity(name, pods[name]), quantity(name, ds[name]))
		}
	}
}

// daemonSetPeak is the most DaemonSet requests any launch of the type could carry.
func (c *checker) daemonSetPeak(n *node, it *cloudprovider.InstanceType) res {
	peak := res{}
	if len(c.snap.DaemonSets) == 0 {
		return peak
	}
	for _, v := range n.variants {
		if v.it != it {
			continue
		}
		peak.maxWith(c.daemonSetRequests(c.variantNode(n, v), n.taints))
	}
	return peak
}

// daemonSetRequests sums the DaemonSet pods that would run on a node: their
// template tolerates its taints and its nodeSelector and affinity match its labels.
func (c *checker) daemonSetRequests(nd *corev1.Node, taints []corev1.Taint) res {
	total := res{}
	for _, ds := range c.snap.DaemonSets {
		pod := &corev1.Pod{Spec: ds.Spec.Template.Spec}
		if _, blocked := untolerated(pod.Spec.Tolerations, taints); blocked {
			continue
		}
		if matchesNode(pod, nd) {
			total.add(podRequests(pod))
		}
	}
	return total
}

// checkNodeFit verifies every placed pod's nodeSelector, required node affinity,
// tolerations and volume topology against its node (every launch of a new claim).
func (c *checker) checkNodeFit() {
	for _, at := range c.pods {
		if !at.placed {
			continue
		}
		n := at.node
		if t, blocked := untolerated(at.pod.Spec.Tolerations, n.taints); blocked {
			c.report(at.pod, n.name, ConstraintTaints, "taint %s=%s:%s is not tolerated", t.Key, t.Value, t.Effect)
		}
		c.checkLabelsFit(at)
	}
}

// checkLabelsFit checks node affinity and volume topology on each possible node.
func (c *checker) checkLabelsFit(at *podAt) {
	n := at.node
	pvs := c.boundVolumes(at.pod)
	if !hasNodeConstraints(at.pod) && len(pvs) == 0 {
		return
	}
	if !n.isNew() {
		c.fitOne(at.pod, n.existingNode(), "node", pvs)
		return
	}
	for _, v := range n.variants {
		if !c.fitOne(at.pod, c.variantNode(n, v), v.describe(), pvs) {
			return // one failing launch is enough to name
		}
	}
}

// fitOne checks one node and reports the first failure.
func (c *checker) fitOne(pod *corev1.Pod, nd *corev1.Node, what string, pvs []*corev1.PersistentVolume) bool {
	if !matchesNode(pod, nd) {
		c.report(pod, nd.Name, ConstraintNodeAffinity, "%s with labels %v does not satisfy the pod's nodeSelector or required node affinity", what, nd.Labels)
		return false
	}
	for _, pv := range pvs {
		if !volumeAllows(pv, nd) {
			c.report(pod, nd.Name, ConstraintVolumeTopology, "%s with labels %v does not satisfy the node affinity of persistent volume %s", what, nd.Labels, pv.Name)
			return false
		}
	}
	return true
}
