package nodepool

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowevents "github.com/stowage-dev/stowage/controller/events"
)

// Reasons of the controller's events.
const (
	// EventReady (Normal): the NodePool became Ready.
	EventReady = "NodePoolReady"
	// EventNotReady (Warning): the NodePool became not Ready.
	EventNotReady = "NodePoolNotReady"
)

// Event is one Kubernetes event about this controller's objects.
type Event = stowevents.Event

// readinessEvent reports the pool's new Ready condition.
func readinessEvent(pool *v1alpha1.NodePool, ready metav1.Condition) Event {
	if ready.Status == metav1.ConditionTrue {
		return Event{Regarding: pool, Type: corev1.EventTypeNormal, Reason: EventReady, Action: "Check", Note: ready.Message}
	}
	return Event{Regarding: pool, Type: corev1.EventTypeWarning, Reason: EventNotReady, Action: "Check", Note: ready.Message}
}
