package scheduler

import (
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// This file is how the solver sees a registered node, so that it places on
// it only what kube-scheduler will: what a node coming up sheds on its own
// does not count against it, and what a node that was up shows now does.

// ephemeralTaints are taints a node sheds on its own as it comes up (the
// unschedulable one is the cordon a new node carries until its DaemonSet
// pods are bound); they do not keep the solver from counting on a node
// that is still initializing.
var ephemeralTaints = []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable, v1alpha1.TaintKeyUnregistered,
	corev1.TaintNodeUnschedulable}

// daemonSetTolerations are the taints the DaemonSet controller makes every
// DaemonSet pod tolerate.
var daemonSetTolerations = []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable, corev1.TaintNodeDiskPressure,
	corev1.TaintNodeMemoryPressure, corev1.TaintNodePIDPressure, corev1.TaintNodeUnschedulable, corev1.TaintNodeNetworkUnavailable}

// initializing reports whether the node is Stowage's and still coming up:
// its claim is not Initialized yet.
func initializing(sn *StateNode) bool {
	return sn.NodeClaim != nil && !meta.IsStatusConditionTrue(sn.NodeClaim.Status.Conditions, v1alpha1.ConditionInitialized)
}

// nodeTaints are the registered node's taints as they will be once it takes
// pods: while it initializes, without the ephemeral taints and its claim's
// startup taints; once up, as they are, for a taint that comes back (a
// NotReady node's) keeps kube-scheduler away. The unschedulable taint only
// mirrors spec.unschedulable, which takesPods reads (and the node lifecycle
// controller lifts the taint a moment after the field).
func nodeTaints(sn *StateNode) []corev1.Taint {
	shed := func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeUnschedulable }
	if initializing(sn) {
		startup := sn.NodeClaim.Spec.StartupTaints
		shed = func(t corev1.Taint) bool {
			return slices.Contains(ephemeralTaints, t.Key) || slices.ContainsFunc(startup, func(s corev1.Taint) bool { return s.MatchTaint(&t) })
		}
	}
	return slices.DeleteFunc(slices.Clone(sn.Node.Spec.Taints), shed)
}

// takesPods reports whether kube-scheduler binds pods to the registered node,
// now or once it has initialized: a node that was up takes none while it is
// cordoned or says it is not Ready (the node lifecycle controller's not-ready
// and unreachable taints follow; nodeTaints keeps them too).
func takesPods(sn *StateNode) bool {
	if sn.Node == nil || initializing(sn) {
		return true
	}
	return !sn.Node.Spec.Unschedulable && !notReady(sn.Node)
}

// notReady reports whether the node's Ready condition is False or Unknown.
func notReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status != corev1.ConditionTrue
		}
	}
	return false
}

// unboundDaemonSets sums the requests of the DaemonSet pods that will run
// on the node or claim and are not bound there yet: they take their room
// before any pod the solver places (a new node stays cordoned until they
// are bound), as the solver's new claims count them too.
func (sv *solver) unboundDaemonSets(sn *StateNode, n *node) scheduling.Resources {
	var total scheduling.Resources
	taints := slices.DeleteFunc(slices.Clone(n.taints), func(t corev1.Taint) bool { return slices.Contains(daemonSetTolerations, t.Key) })
	for _, ds := range sv.snapshot.DaemonSets {
		if slices.ContainsFunc(sn.Pods, func(p *corev1.Pod) bool { return ownedBy(p, ds) }) {
			continue
		}
		pod := &corev1.Pod{ObjectMeta: ds.Spec.Template.ObjectMeta, Spec: ds.Spec.Template.Spec}
		if scheduling.Tolerates(taints, pod.Spec.Tolerations) != nil || !runsOn(pod, sn, n) {
			continue
		}
		total = total.Add(scheduling.PodRequests(pod))
	}
	return total
}

// runsOn reports whether the pod's node selector and required affinity
// admit the node, or, for a claim not yet registered, may.
func runsOn(pod *corev1.Pod, sn *StateNode, n *node) bool {
	if sn.Node != nil {
		ok, _ := nodeaffinity.GetRequiredNodeAffinity(pod).Match(sn.Node)
		return ok
	}
	return anyTermCompatible(n.reqs, nodeRequirementTerms(pod))
}

// ownedBy reports whether the DaemonSet controls the pod (by kind and name:
// the pod is in its namespace).
func ownedBy(p *corev1.Pod, ds *appsv1.DaemonSet) bool {
	ref := metav1.GetControllerOf(p)
	return ref != nil && ref.Kind == "DaemonSet" && ref.Name == ds.Name && p.Namespace == ds.Namespace
}
