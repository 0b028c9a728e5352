package simulate

import (
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// kube-scheduler's scheduling queue, as far as it decides when a pending pod
// is tried again (pkg/scheduler/internal/queue, and the defaults of
// KubeSchedulerConfiguration v1):
//   - a new pod is tried at once (activeQ);
//   - a pod that failed waits in the unschedulable pods until a cluster event
//     (a node turned usable, a pod gone) moves it to the backoff queue, or
//     until it has waited podMaxInUnschedulablePodsDuration;
//   - out of the backoff queue it is tried again once its backoff has run out:
//     podInitialBackoffSeconds (1 s) doubled for each attempt after the
//     first, up to podMaxBackoffSeconds (10 s), counted from its last attempt.
//
// So a pending pod is tried, and its status rewritten, at most once per its
// backoff however many nodes register meanwhile. Of the queueing hints (which
// skip events that cannot help a pod) only the node's is modelled (nodeEvent);
// the scheduler's own throughput, and popping from the backoff queue when the
// active queue is empty (KEP-5142, off by default when it came in 1.33), are not.
const (
	podInitialBackoff                 = time.Second
	podMaxBackoff                     = 10 * time.Second
	podMaxInUnschedulablePodsDuration = 5 * time.Minute
)

// backoff is how long a pod tried attempts times waits before its next try.
func backoff(attempts int) time.Duration {
	d := podInitialBackoff
	for i := 1; i < attempts && d < podMaxBackoff; i++ {
		d *= 2
	}
	return min(d, podMaxBackoff)
}

// retryAt is when the pod is next tried, as things stand: at once for a pod
// never tried; else at the end of its backoff if a cluster event came after
// its last attempt, or when it has waited the longest the unschedulable pods
// keep it.
func (w *world) retryAt(sp *simPod) time.Time {
	if sp.attempts == 0 {
		return time.Time{}
	}
	if w.eventAt.After(sp.triedAt) {
		return sp.triedAt.Add(backoff(sp.attempts))
	}
	return sp.triedAt.Add(podMaxInUnschedulablePodsDuration)
}

// dueForRetry lists the pending pods due for a try now, and notes in
// w.nextRetry when the first of the others is due.
func (w *world) dueForRetry() []*simPod {
	now := w.clk.Now()
	var due []*simPod
	w.nextRetry = time.Time{}
	for _, sp := range w.pendingPods() {
		at := w.retryAt(sp)
		if !at.After(now) {
			due = append(due, sp)
		} else if w.nextRetry.IsZero() || at.Before(w.nextRetry) {
			w.nextRetry = at
		}
	}
	return due
}

// nodeEvent is kube-scheduler's view of a Node written or gone: the event
// moves the unschedulable pods only when the node turns into one that could
// take them (registered, or becoming Ready, untainted or uncordoned), as its
// queueing hints skip the events that cannot make a pod schedulable (a node
// gone, cordoned, or updated in what no filter reads); a retry then would
// only restart the pods' backoff just before the node becomes usable.
func (w *world) nodeEvent(node *corev1.Node, gone bool) {
	if w.takesPods == nil {
		w.takesPods = map[string]bool{}
	}
	takes := !gone && mayTakePods(node)
	if takes && !w.takesPods[node.Name] {
		w.dirty = true
	}
	if takes {
		w.takesPods[node.Name] = true
	} else {
		delete(w.takesPods, node.Name)
	}
}

// mayTakePods reports whether a node could take a pending pod: it is Ready,
// takes pods and carries none of the taints that keep every pod off a node
// while it starts or fails (Stowage's unregistered taint, the node lifecycle
// controller's).
func mayTakePods(node *corev1.Node) bool {
	if !nodeReady(node) || node.Spec.Unschedulable || node.DeletionTimestamp != nil {
		return false
	}
	return !slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool {
		return t.Effect != corev1.TaintEffectPreferNoSchedule &&
			(t.Key == v1alpha1.TaintKeyUnregistered || strings.HasPrefix(t.Key, "node.kubernetes.io/"))
	})
}

// tried records a failed attempt at the pod: it goes back to the
// unschedulable pods.
func (w *world) tried(sp *simPod) {
	sp.attempts++
	sp.triedAt = w.clk.Now()
	if at := w.retryAt(sp); w.nextRetry.IsZero() || at.Before(w.nextRetry) {
		w.nextRetry = at
	}
}
