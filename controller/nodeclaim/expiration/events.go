package expiration

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowevents "github.com/stowage-dev/stowage/controller/events"
)

// ReasonExpired is the reason of the event on an expired claim.
const ReasonExpired = "Expired"

func expiredEvent(claim *v1alpha1.NodeClaim, at time.Time) stowevents.Event {
	return stowevents.Event{Regarding: claim, Type: corev1.EventTypeNormal, Reason: ReasonExpired, Action: "Disrupt",
		Note: "Expired at " + at.UTC().Format(time.RFC3339) + " (expireAfter " + claim.Spec.ExpireAfter.String() +
			"): deleting the NodeClaim; its pods move once their replacement is Ready"}
}
