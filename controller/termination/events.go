package termination

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowevents "github.com/stowage-dev/stowage/controller/events"
)

// Event is one Kubernetes event about this controller's objects.
type Event = stowevents.Event

// ReasonEvictionRefused is the reason of the Warning event about a pod whose
// eviction a PodDisruptionBudget refused.
const ReasonEvictionRefused = "EvictionRefused"

func drainingEvent(node *corev1.Node, pods int, deadline *time.Time) Event {
	note := fmt.Sprintf("Draining %d pods", pods)
	if deadline != nil {
		note += "; pods still here at " + deadline.UTC().Format(time.RFC3339) + " will be deleted"
	}
	return Event{Regarding: node, Type: corev1.EventTypeNormal, Reason: "Draining", Action: "Drain", Note: note}
}

func disruptionBlockedEvent(pod *corev1.Pod, node *corev1.Node, deadline *time.Time) Event {
	note := "Pod is annotated do-not-disrupt; node " + node.Name + " waits for it"
	if deadline != nil {
		note += " until " + deadline.UTC().Format(time.RFC3339)
	}
	return Event{Regarding: pod, Type: corev1.EventTypeWarning, Reason: "DisruptionBlocked", Action: "Drain", Note: note}
}

func evictedEvent(pod *corev1.Pod) Event {
	return Event{Regarding: pod, Type: corev1.EventTypeNormal, Reason: "Evicted", Action: "Evict",
		Note: "Evicted from node " + pod.Spec.NodeName + ", which is being terminated"}
}

func evictionRefusedEvent(pod *corev1.Pod, err error) Event {
	return Event{Regarding: pod, Type: corev1.EventTypeWarning, Reason: ReasonEvictionRefused, Action: "Evict",
		Note: "Eviction refused, retrying: " + err.Error()}
}

// forced says why a drain deletes pods past PDBs and do-not-disrupt: the
// reason of its events and the end of their note and log line.
type forced struct{ reason, why string }

var (
	gracePeriodOver     = forced{"TerminationGracePeriodOver", "termination grace period is over"}
	interruptionArrives = forced{"InterruptionDeadline", "instance is interrupted, and the pod must be gone by the deadline"}
)

func podDeletedEvent(pod *corev1.Pod, node *corev1.Node, f forced) Event {
	return Event{Regarding: pod, Type: corev1.EventTypeWarning, Reason: f.reason, Action: "Delete",
		Note: "Deleted: node " + node.Name + "'s " + f.why}
}

func terminatedEvent(claim *v1alpha1.NodeClaim) Event {
	return Event{Regarding: claim, Type: corev1.EventTypeNormal, Reason: "Terminated", Action: "Terminate",
		Note: "Instance " + claim.Status.ProviderID + " terminated and node removed"}
}

func nodeDeletedEvent(claim *v1alpha1.NodeClaim, node *corev1.Node) Event {
	return Event{Regarding: claim, Type: corev1.EventTypeNormal, Reason: "NodeDeleted", Action: "Delete",
		Note: "Deleting: node " + node.Name + " was deleted"}
}
