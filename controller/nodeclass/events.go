package nodeclass

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowevents "github.com/stowage-dev/stowage/controller/events"
)

// Reasons of the controller's events.
const (
	// EventReady (Normal): the NodeClass became Ready.
	EventReady = "NodeClassReady"
	// EventNotReady (Warning): the NodeClass became not Ready (False or Unknown).
	EventNotReady = "NodeClassNotReady"
	// EventUserDataReplaced (Warning): settings of the NodeClass's userData
	// give way to Stowage's own on every node of the class.
	EventUserDataReplaced = "UserDataReplaced"
)

// ReasonNotReported is the Ready condition's reason when the Resolver
// returned no Ready condition.
const ReasonNotReported = "NotReported"

// Event is one Kubernetes event about this controller's objects.
type Event = stowevents.Event

// readinessEvent reports the NodeClass's new Ready condition.
func readinessEvent(nc *v1alpha1.NodeClass, ready *metav1.Condition) Event {
	if ready.Status == metav1.ConditionTrue {
		return Event{Regarding: nc, Type: corev1.EventTypeNormal, Reason: EventReady, Action: "Resolve",
			Note: "Status.Conditions.Ready is True: the selectors and the instance profile resolved"}
	}
	note := "Status.Conditions.Ready is " + string(ready.Status) + " (" + ready.Reason + ")"
	if ready.Message != "" {
		note += ": " + ready.Message
	}
	return Event{Regarding: nc, Type: corev1.EventTypeWarning, Reason: EventNotReady, Action: "Resolve", Note: note}
}

// userDataReplacedEvent names the userData settings Stowage's own replace.
func userDataReplacedEvent(nc *v1alpha1.NodeClass, settings []string) Event {
	return Event{Regarding: nc, Type: corev1.EventTypeWarning, Reason: EventUserDataReplaced, Action: "RenderUserData",
		Note: "spec.userData sets " + strings.Join(settings, ", ") + ", which Stowage sets itself on every node: " +
			"its own values are used; set the kubelet's through spec.kubelet, and remove them from spec.userData"}
}
