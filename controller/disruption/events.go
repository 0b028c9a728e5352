package disruption

import (
	stowevents "github.com/stowage-dev/stowage/controller/events"

	corev1 "k8s.io/api/core/v1"
)

// Event reasons the disruption controller publishes, on both the NodeClaim
// and the Node.
const (
	// ReasonDisrupting: the NodeClaim is being deleted for a disruption reason.
	ReasonDisrupting = "Disrupting"
	// ReasonDisruptionBlocked: a method would disrupt the node but may not
	// now; the note says why. Published when the reason first appears or changes.
	ReasonDisruptionBlocked = "DisruptionBlocked"
)

// Event is one Kubernetes event about this controller's objects.
type Event = stowevents.Event

// onBoth returns e about the candidate's NodeClaim and about its Node.
func onBoth(c *Candidate, e Event) []Event {
	onClaim, onNode := e, e
	onClaim.Regarding, onNode.Regarding = c.NodeClaim, c.Node
	return []Event{onClaim, onNode}
}

func disruptingEvents(c *Candidate, reason string) []Event {
	return onBoth(c, Event{Type: corev1.EventTypeNormal, Reason: ReasonDisrupting, Action: "Disrupt",
		Note: "Disrupting node " + c.Node.Name + " (NodeClaim " + c.NodeClaim.Name + "), reason " + reason + ": deleting the NodeClaim"})
}

func blockedEvents(b Blocked, method Method) []Event {
	return onBoth(b.Candidate, Event{Type: corev1.EventTypeNormal, Reason: ReasonDisruptionBlocked, Action: "Disrupt",
		Note: "Cannot disrupt node " + b.Candidate.Node.Name + " (" + method.Reason() + "): " + b.Why})
}
