package lifecycle

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowevents "github.com/stowage-dev/stowage/controller/events"
)

// Event is one Kubernetes event about this controller's objects.
type Event = stowevents.Event

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

// ReasonAllocatableMismatch is the event of a Node whose allocatable is not
// the one predicted at launch.
const ReasonAllocatableMismatch = "AllocatableMismatch"

// allocatableMismatchEvent says the Node's allocatable is not the one
// Stowage planned the claim's pods with.
func allocatableMismatchEvent(claim *v1alpha1.NodeClaim, node *corev1.Node, diffs string) Event {
	return Event{Regarding: claim, Type: corev1.EventTypeWarning, Reason: ReasonAllocatableMismatch, Action: "Initialize",
		Note: "Node " + node.Name + "'s allocatable is not what was predicted at launch: " + diffs}
}

func timedOutEvent(claim *v1alpha1.NodeClaim, phase string, timeout fmt.Stringer) Event {
	return Event{Regarding: claim, Type: corev1.EventTypeWarning, Reason: "TimedOut", Action: "Delete",
		Note: fmt.Sprintf("Deleting: %s did not complete within %s", phase, timeout)}
}

func shortEvent(claim *v1alpha1.NodeClaim, message string) Event {
	return Event{Regarding: claim, Type: corev1.EventTypeWarning, Reason: ReasonInsufficientCapacity, Action: "Delete",
		Note: "Deleting: every offering the nodeclaim allows is short, so its pods are planned again elsewhere: " + message}
}

func daemonSetsTimedOutEvent(claim *v1alpha1.NodeClaim, node *corev1.Node, missing []string, timeout fmt.Stringer) Event {
	return Event{Regarding: claim, Type: corev1.EventTypeWarning, Reason: "DaemonSetsTimedOut", Action: "Initialize",
		Note: fmt.Sprintf("Uncordoning node %s after %s without the pods of daemonsets %v", node.Name, timeout, missing)}
}
