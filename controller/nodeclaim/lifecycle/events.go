package lifecycle

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// Event is one Kubernetes event; the constructors below keep every reason
// and wording of this controller's events in one place.
type Event struct {
	Regarding runtime.Object
	Type      string
	Reason    string
	Action    string
	Note      string
}

// maxNote is the events.k8s.io/v1 limit on an event's note.
const maxNote = 1024

func publish(rec events.EventRecorder, e Event) {
	if rec == nil {
		return
	}
	note := e.Note
	if len(note) > maxNote {
		note = note[:maxNote-3] + "..."
	}
	rec.Eventf(e.Regarding, nil, e.Type, e.Reason, e.Action, "%s", note)
}

func launchedEvent(claim *v1alpha1.NodeClaim) Event {
	return Event{Regarding: claim, Type: corev1.EventTypeNormal, Reason: "Launched", Action: "Launch",
		Note: fmt.Sprintf("Launched %s %s in %s as %s", claim.Labels[v1alpha1.LabelCapacityType],
			claim.Labels[corev1.LabelInstanceTypeStable], claim.Labels[corev1.LabelTopologyZone], claim.Status.ProviderID)}
}

func launchFailedEvent(claim *v1alpha1.NodeClaim, reason, message string) Event {
	return Event{Regarding: claim, Type: corev1.EventTypeWarning, Reason: "LaunchFailed", Action: "Launch",
		Note: fmt.Sprintf("Launch failed (%s), retrying: %s", reason, message)}
}

func registeredEvent(claim *v1alpha1.NodeClaim, node *corev1.Node) Event {
	return Event{Regarding: claim, Type: corev1.EventTypeNormal, Reason: "Registered", Action: "Register",
		Note: "Node " + node.Name + " registered"}
}

func initializedEvent(claim *v1alpha1.NodeClaim, node *corev1.Node) Event {
	return Event{Regarding: claim, Type: corev1.EventTypeNormal, Reason: "Initialized", Action: "Initialize",
		Note: "Node " + node.Name + " is ready for pods"}
}

func timedOutEvent(claim *v1alpha1.NodeClaim, phase string, timeout fmt.Stringer) Event {
	return Event{Regarding: claim, Type: corev1.EventTypeWarning, Reason: "TimedOut", Action: "Delete",
		Note: fmt.Sprintf("Deleting: %s did not complete within %s", phase, timeout)}
}
