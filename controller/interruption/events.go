package interruption

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowevents "github.com/stowage-dev/stowage/controller/events"
)

// Reasons of the controller's events.
const (
	// EventInterruptionReceived (Normal): a Node carries a new mark.
	EventInterruptionReceived = "InterruptionReceived"
	// EventReplacingNode (Normal): the Node's NodeClaim was deleted.
	EventReplacingNode = "ReplacingNode"
	// EventNodeNotManaged (Warning): a marked Node has no NodeClaim.
	EventNodeNotManaged = "NodeNotManaged"
	// EventMalformedMark (Warning): a mark annotation's value was not understood.
	EventMalformedMark = "MalformedInterruptionMark"
)

// Event is one Kubernetes event about this controller's objects.
type Event = stowevents.Event

// maxValue bounds how much of a malformed annotation value an event quotes.
const maxValue = 64

func receivedEvent(marked runtime.Object, m Mark, replaced bool) Event {
	note := "Received " + describe(m)
	switch {
	case !KnownKind(m.Kind):
	case replaced:
		note += "; replacing the node"
	default:
		note += "; the node is not replaced (replaceOnRebalance is off)"
	}
	return Event{Regarding: marked, Type: corev1.EventTypeNormal, Reason: EventInterruptionReceived, Action: "Receive", Note: note}
}

func replacingEvent(marked, claim runtime.Object, m Mark, now time.Time) Event {
	note := fmt.Sprintf("Deleted its NodeClaim for %s", describe(m))
	if marked == claim {
		// A claim marked before its instance registered a Node.
		note, claim = fmt.Sprintf("Deleted the NodeClaim, whose instance has no Node yet, for %s", describe(m)), nil
	}
	if !m.Deadline.IsZero() {
		note += fmt.Sprintf(", %s before the deadline", m.Deadline.Sub(now).Round(time.Second))
	}
	return Event{Regarding: marked, Related: claim, Type: corev1.EventTypeNormal, Reason: EventReplacingNode, Action: "Replace", Note: note}
}

func notManagedEvent(node *corev1.Node, m Mark) Event {
	return Event{Regarding: node, Type: corev1.EventTypeWarning, Reason: EventNodeNotManaged, Action: "Receive",
		Note: "Received " + describe(m) + ", but no NodeClaim has provider id " + node.Spec.ProviderID +
			"; Stowage leaves the node alone"}
}

func malformedEvent(marked runtime.Object, annotation, value string) Event {
	if len(value) > maxValue {
		value = value[:maxValue] + "..."
	}
	note := fmt.Sprintf("Annotation %s has value %q, ", annotation, value)
	if annotation == v1alpha1.AnnotationInterruptionDeadline {
		note += "which is not an RFC 3339 time; the mark is handled as having no deadline"
	} else {
		note += fmt.Sprintf("which is not one of %v; the node is left alone", v1alpha1.InterruptionKinds)
	}
	return Event{Regarding: marked, Type: corev1.EventTypeWarning, Reason: EventMalformedMark, Action: "Receive", Note: note}
}

// describe names the mark in event notes: "spot-interruption (event e-1,
// deadline 2026-11-01T02:02:00Z)".
func describe(m Mark) string {
	var details []string
	if m.EventID != "" {
		details = append(details, "event "+m.EventID)
	}
	if !m.Deadline.IsZero() {
		details = append(details, "deadline "+m.formattedDeadline())
	}
	if len(details) == 0 {
		return m.Kind
	}
	return m.Kind + " (" + strings.Join(details, ", ") + ")"
}
