package scheduling

import corev1 "k8s.io/api/core/v1"

// Reschedulable reports whether a pod would need a new home if its node
// went: every pod but DaemonSet and mirror pods (their controllers put them
// back on each node), and pods that are finished or being deleted.
func Reschedulable(p *corev1.Pod) bool {
	return !Finished(p) && p.DeletionTimestamp == nil && !OwnedByDaemonSet(p) && !IsMirror(p)
}

// Finished reports whether the pod has succeeded or failed.
func Finished(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// IsMirror reports whether the pod is the API's mirror of a static pod.
func IsMirror(p *corev1.Pod) bool {
	_, ok := p.Annotations[corev1.MirrorPodAnnotationKey]
	return ok
}

// OwnedByDaemonSet reports whether a DaemonSet controls the pod.
func OwnedByDaemonSet(p *corev1.Pod) bool {
	for _, ref := range p.OwnerReferences {
		if ref.Kind == "DaemonSet" && ref.Controller != nil && *ref.Controller {
			return true
		}
	}
	return false
}
