package provisioning

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	stowevents "github.com/stowage-dev/stowage/controller/events"
)

// Event reasons the provisioner publishes.
const (
	// ReasonNominated: the pod is expected to land on a NodeClaim (or node) the
	// provisioner picked for it.
	ReasonNominated = "Nominated"
	// ReasonFailedScheduling: no NodePool can launch a node for the pod; the
	// message carries the solver's reason, pool by pool.
	ReasonFailedScheduling = "FailedScheduling"
	// ReasonWaitingForBatch: the batch's solve reached its time bound
	// before the pod's turn (higher priorities go first); the next batch
	// tries it.
	ReasonWaitingForBatch = "WaitingForNextBatch"
)

// Event is one Kubernetes event about an object.
type Event struct {
	// Object is what the event is about.
	Object client.Object
	// Related is a second object the event names, e.g. the NodeClaim; may be nil.
	Related client.Object
	Type    string
	Reason  string
	// Action is what the provisioner did or failed to do, e.g. "Provision".
	Action  string
	Message string
}

// Recorder publishes events. Publish never fails: events are best effort.
type Recorder interface {
	Publish(events ...Event)
}

// NominatedEvent says pod is expected on target, a NodeClaim or node.
func NominatedEvent(pod *corev1.Pod, target client.Object) Event {
	return Event{Object: pod, Related: target, Type: corev1.EventTypeNormal, Reason: ReasonNominated, Action: "Provision",
		Message: fmt.Sprintf("Pod should schedule on %s %s", kindOf(target), target.GetName())}
}

// FailedSchedulingEvent says why no NodePool can take pod.
func FailedSchedulingEvent(pod *corev1.Pod, reason string) Event {
	return Event{Object: pod, Type: corev1.EventTypeWarning, Reason: ReasonFailedScheduling, Action: "Provision",
		Message: "Failed to provision a node for the pod: " + reason}
}

// WaitingForBatchEvent says the solve's bound left pod for the next batch.
func WaitingForBatchEvent(pod *corev1.Pod, reason string) Event {
	return Event{Object: pod, Type: corev1.EventTypeNormal, Reason: ReasonWaitingForBatch, Action: "Provision",
		Message: "Waiting for the next provisioning batch: " + reason}
}

func kindOf(obj client.Object) string {
	if _, ok := obj.(*corev1.Node); ok {
		return "node"
	}
	return "nodeclaim"
}

// KubeRecorder publishes through a Kubernetes events.k8s.io recorder, such as
// a manager's GetEventRecorder("stowage"). The recorder's scheme must know
// stowage.dev/v1alpha1 for events to name their NodeClaim.
type KubeRecorder struct {
	Recorder events.EventRecorder
}

var _ Recorder = KubeRecorder{}

// Publish records each event, cutting messages to the API's limit.
func (r KubeRecorder) Publish(evs ...Event) {
	for _, e := range evs {
		r.Recorder.Eventf(e.Object, e.Related, e.Type, e.Reason, e.Action, "%s", stowevents.Note(e.Message))
	}
}
