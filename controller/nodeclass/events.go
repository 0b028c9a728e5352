package nodeclass

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// Reasons of the controller's events.
const (
	// EventReady (Normal): the NodeClass became Ready.
	EventReady = "NodeClassReady"
	// EventNotReady (Warning): the NodeClass became not Ready (False or Unknown).
	EventNotReady = "NodeClassNotReady"
)

// ReasonNotReported is the Ready condition's reason when the Resolver
// returned no Ready condition.
const ReasonNotReported = "NotReported"

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
