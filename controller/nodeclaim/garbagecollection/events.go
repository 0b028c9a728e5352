package garbagecollection

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
)

// An orphaned instance has no Kubernetes object to report on; only its Node,
// when it registered one, gets an event.
func publishNodeCollected(rec events.EventRecorder, node *corev1.Node) {
	if rec == nil || node == nil {
		return
	}
	rec.Eventf(node, nil, corev1.EventTypeWarning, "GarbageCollected", "Delete",
		"Deleting node: no NodeClaim owns its instance %s", node.Spec.ProviderID)
}
