package disruption

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	stowevents "github.com/stowage-dev/stowage/controller/events"
)

// Event reasons the disruption controller publishes, on both the NodeClaim
// and the Node.
const (
	// ReasonDisrupting: the NodeClaim is being deleted by a disruption command.
	ReasonDisrupting = "Disrupting"
	// ReasonDisruptionBlocked: a method would disrupt the node but may not
	// now; the note names the blocker. Published when the blocker first
	// appears or changes.
	ReasonDisruptionBlocked = "DisruptionBlocked"
	// ReasonDisruptionFailed: a command was rolled back (a replacement did
	// not come up) and the node takes pods again.
	ReasonDisruptionFailed = "DisruptionFailed"
)

// Event is one Kubernetes event about this controller's objects.
type Event = stowevents.Event

// onBoth returns e about the candidate's NodeClaim and about its Node.
func onBoth(c *Candidate, e Event) []Event {
	onClaim, onNode := e, e
	onClaim.Regarding, onNode.Regarding = c.NodeClaim, c.Node
	return []Event{onClaim, onNode}
}

func disruptingEvents(c *Candidate, cmd Command) []Event {
	note := fmt.Sprintf("Disrupting node %s (NodeClaim %s), command %s by %s, reason %s: deleting the NodeClaim", c.Node.Name,
		c.NodeClaim.Name, cmd.ID, cmd.Method, cmd.Reason)
	if len(cmd.Replacements) > 0 {
		note += fmt.Sprintf(", replaced by %d new node(s)", len(cmd.Replacements))
	}
	if cmd.Why != "" {
		note += "; " + cmd.Why
	}
	return onBoth(c, Event{Type: corev1.EventTypeNormal, Reason: ReasonDisrupting, Action: "Disrupt", Note: note})
}

func blockedEvents(b Blocked, method Method) []Event {
	return onBoth(b.Candidate, Event{Type: corev1.EventTypeNormal, Reason: ReasonDisruptionBlocked, Action: "Disrupt",
		Note: fmt.Sprintf("Cannot disrupt node %s (%s, %s), blocked by %s: %s", b.Candidate.Node.Name, method.Name(), method.Reason(), b.Kind, b.Why)})
}

func failedEvents(c *Candidate, cmd Command, why string) []Event {
	return onBoth(c, Event{Type: corev1.EventTypeWarning, Reason: ReasonDisruptionFailed, Action: "Disrupt",
		Note: fmt.Sprintf("Disruption command %s by %s on nodes %s rolled back: %s", cmd.ID, cmd.Method, strings.Join(cmd.Names(), ", "), why)})
}
