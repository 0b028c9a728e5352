package termination

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// doNotDisruptKeys are Stowage's do-not-disrupt annotation and Karpenter's.
var doNotDisruptKeys = []string{v1alpha1.AnnotationDoNotDisrupt, v1alpha1.AnnotationKarpenterDoNotDisrupt}

// DoNotDisruptAnnotated reports whether the annotations carry a
// do-not-disrupt key, whatever its value: the object may be protected at
// some time (see DoNotDisruptUntil).
func DoNotDisruptAnnotated(annotations map[string]string) bool {
	for _, key := range doNotDisruptKeys {
		if _, ok := annotations[key]; ok {
			return true
		}
	}
	return false
}

// DoNotDisruptUntil reads the do-not-disrupt annotations (Stowage's
// stowage.dev/do-not-disrupt or Karpenter's karpenter.sh/do-not-disrupt) of an
// object that started at start. The value "true" protects the object for as
// long as it carries it; a duration such as "30m" or "4h" protects it for
// that long after start. It reports whether the object is protected at now,
// and until when (zero while "true"). Any other value protects nothing, as
// Karpenter reads it.
func DoNotDisruptUntil(annotations map[string]string, start, now time.Time) (protected bool, until time.Time) {
	for _, key := range doNotDisruptKeys {
		v, ok := annotations[key]
		if !ok {
			continue
		}
		if v == "true" {
			return true, time.Time{}
		}
		if d, err := time.ParseDuration(v); err == nil && d > 0 && now.Before(start.Add(d)) {
			return true, start.Add(d)
		}
	}
	return false, time.Time{}
}

// PodStart is when a pod started running (its status's startTime), or its
// creation before it has.
func PodStart(pod *corev1.Pod) time.Time {
	if pod.Status.StartTime != nil {
		return pod.Status.StartTime.Time
	}
	return pod.CreationTimestamp.Time
}

// DoNotDisrupt reports whether the pod asks, at now, not to be disrupted.
func DoNotDisrupt(pod *corev1.Pod, now time.Time) bool {
	protected, _ := DoNotDisruptUntil(pod.Annotations, PodStart(pod), now)
	return protected
}
