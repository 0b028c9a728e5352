package termination

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowevents "github.com/stowage-dev/stowage/controller/events"
)

// DefaultReplacementWait bounds how long a drain waits for its pods'
// replacement capacity when nothing sets an earlier time: a launch and a
// boot take one to two minutes, and a shortage adds a fallback or two.
const DefaultReplacementWait = 5 * time.Minute

// defaultPodGrace is a pod's termination grace period when it sets none.
const defaultPodGrace = 30 * time.Second

// Homes tells the drain whether the pods of a node have somewhere Ready to
// go; disruption.Homes answers from the cluster state.
type Homes interface {
	// Ready reports whether every pod of the node that would need a new
	// home fits on a Ready node now.
	Ready(ctx context.Context, node string) bool
}

// awaitReplacement reports whether the drain should hold off evicting: the
// node's pods have no Ready home yet (their replacement capacity, which the
// provisioner launched when the node was marked, is still coming up) and the
// drain-by time has not come. Once a drain has started it is not held again.
func (t *terminator) awaitReplacement(ctx context.Context, j job, waiting []*corev1.Pod) bool {
	if t.opts.Homes == nil || t.released.has(j.key, "") {
		return false
	}
	by := drainBy(j, waiting, t.opts.ReplacementWait, t.waitingSince(j.key))
	if !t.clk.Now().Before(by) || t.opts.Homes.Ready(ctx, j.node.Name) {
		t.released.add(j.key, "")
		return false
	}
	if t.awaited.add(j.key, "") {
		t.log.Info("waiting for the pods' replacement capacity before draining", "node", j.node.Name, "nodeclaim", j.claim.Name,
			"nodepool", j.claim.Labels[v1alpha1.LabelNodePool], "drain_by", by.UTC().Format(time.RFC3339))
		stowevents.Publish(t.recorder, awaitingReplacementEvent(j.node, by))
	}
	return true
}

// drainBy is the latest a drain may start: its deletion (or, if later on the
// API server's clock than on the controllers', when the drain first waited)
// plus the replacement wait, and, when they are earlier, the interruption
// deadline less the pods' longest grace and evictionMargin (interruptedBy),
// and the end of the claim's terminationGracePeriod less that grace.
func drainBy(j job, waiting []*corev1.Pod, wait time.Duration, since time.Time) time.Time {
	deleted := since
	switch {
	case j.claim.DeletionTimestamp != nil && j.claim.DeletionTimestamp.Before(&metav1.Time{Time: since}):
		deleted = j.claim.DeletionTimestamp.Time
	case j.claim.DeletionTimestamp == nil && j.node.DeletionTimestamp != nil && j.node.DeletionTimestamp.Before(&metav1.Time{Time: since}):
		deleted = j.node.DeletionTimestamp.Time
	}
	by := deleted.Add(wait)
	grace := longestGrace(waiting)
	if at := interruptedBy(j, waiting); at != nil && at.Before(by) {
		by = *at
	}
	if j.deadline != nil && j.deadline.Add(-grace).Before(by) {
		by = j.deadline.Add(-grace)
	}
	return by
}

// evictionMargin is what an interrupted node's drain keeps before the
// deadline for the eviction calls and the kubelet, beyond its pods' grace.
const evictionMargin = 10 * time.Second

// interruptedBy is when the pods of an interrupted node must be evicted at
// the latest, so that each is gone, its grace honoured, before the instance
// is: the earliest interruption deadline marked on the Node or on its claim
// (marked while the instance had no Node yet), less the pods' longest grace
// and evictionMargin. Nil without a deadline.
func interruptedBy(j job, waiting []*corev1.Pod) *time.Time {
	var out *time.Time
	for _, obj := range []metav1.Object{j.node, j.claim} {
		raw := obj.GetAnnotations()[v1alpha1.AnnotationInterruptionDeadline]
		deadline, err := time.Parse(time.RFC3339, raw)
		if raw == "" || err != nil {
			continue
		}
		at := deadline.Add(-longestGrace(waiting) - evictionMargin)
		if out == nil || at.Before(*out) {
			out = &at
		}
	}
	return out
}

// waitingSince is when the drain of the job first waited, on the controllers'
// clock.
func (t *terminator) waitingSince(key string) time.Time {
	t.waitMu.Lock()
	defer t.waitMu.Unlock()
	if t.waitStart == nil {
		t.waitStart = map[string]time.Time{}
	}
	at, ok := t.waitStart[key]
	if !ok {
		at = t.clk.Now()
		t.waitStart[key] = at
	}
	return at
}

// forgetWait drops the job's first wait.
func (t *terminator) forgetWait(key string) {
	t.waitMu.Lock()
	defer t.waitMu.Unlock()
	delete(t.waitStart, key)
}

func longestGrace(pods []*corev1.Pod) time.Duration {
	out := time.Duration(0)
	for _, p := range pods {
		g := defaultPodGrace
		if p.Spec.TerminationGracePeriodSeconds != nil {
			g = time.Duration(*p.Spec.TerminationGracePeriodSeconds) * time.Second
		}
		out = max(out, g)
	}
	return out
}

func awaitingReplacementEvent(node *corev1.Node, by time.Time) Event {
	return Event{Regarding: node, Type: corev1.EventTypeNormal, Reason: "AwaitingReplacement", Action: "Drain",
		Note: "Pods wait for their replacement capacity to be Ready before the drain; it starts by " + by.UTC().Format(time.RFC3339) + " at the latest"}
}
