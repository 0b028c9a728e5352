package repair

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowevents "github.com/stowage-dev/stowage/controller/events"
)

// Reasons of the controller's events.
const (
	// ReasonRepaired is on a node whose claim repair deleted.
	ReasonRepaired = "NodeRepaired"
	// ReasonRepairBlocked is on a node repair held back: too many of its pool's nodes are unhealthy.
	ReasonRepairBlocked = "NodeRepairBlocked"
)

func repairedEvent(node *corev1.Node, claim *v1alpha1.NodeClaim, cond *corev1.NodeCondition, after time.Duration) stowevents.Event {
	return stowevents.Event{Regarding: node, Related: claim, Type: corev1.EventTypeWarning, Reason: ReasonRepaired, Action: "Disrupt",
		Note: fmt.Sprintf("Ready has been %s (%s) since %s, longer than the pool's repairAfter %s: deleting NodeClaim %s; its pods get new capacity",
			cond.Status, cond.Reason, cond.LastTransitionTime.UTC().Format(time.RFC3339), after, claim.Name)}
}

func blockedEvent(node *corev1.Node, pool string, unhealthy, total, limit int) stowevents.Event {
	return stowevents.Event{Regarding: node, Type: corev1.EventTypeWarning, Reason: ReasonRepairBlocked, Action: "Disrupt",
		Note: fmt.Sprintf("not repaired: %d of nodepool %s's %d nodes are unhealthy, more than %s (%d); the cause is likely not the nodes (a lost zone, the network, the image)",
			unhealthy, pool, total, MaxUnhealthy.String(), limit)}
}
