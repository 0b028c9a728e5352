package drift

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowevents "github.com/stowage-dev/stowage/controller/events"
)

func driftedEvent(claim *v1alpha1.NodeClaim, reason, message string) stowevents.Event {
	return stowevents.Event{Regarding: claim, Type: corev1.EventTypeNormal, Reason: "Drifted", Action: "Detect",
		Note: "Drifted (" + reason + "): " + message + "; it is replaced within the nodepool's Drifted budget"}
}
