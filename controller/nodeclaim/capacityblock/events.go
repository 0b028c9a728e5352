package capacityblock

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowevents "github.com/stowage-dev/stowage/controller/events"
)

// ReasonCapacityBlockEnding is the reason of the event on a claim moved off its block.
const ReasonCapacityBlockEnding = "CapacityBlockEnding"

func leavingEvent(claim *v1alpha1.NodeClaim, block string, end time.Time, lead time.Duration) stowevents.Event {
	return stowevents.Event{Regarding: claim, Type: corev1.EventTypeNormal, Reason: ReasonCapacityBlockEnding, Action: "Disrupt",
		Note: fmt.Sprintf("Capacity Block %s ends at %s (EC2 terminates its instances 30 minutes before); capacityBlockLeadTime %s: "+
			"replacing the node on the pool's next option", block, end.UTC().Format(time.RFC3339), lead)}
}
