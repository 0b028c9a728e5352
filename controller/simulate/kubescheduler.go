package simulate

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// schedulePods is kube-scheduler's part: pending pods are bound to Ready
// nodes that take them, by the same predicates the solver checks; the rest are
// marked Unschedulable, which is what the autoscalers watch for. It runs when
// something changed, as kube-scheduler retries on cluster events.
func (w *world) schedulePods(ctx context.Context) error {
	if !w.dirty {
		return nil
	}
	w.dirty = false
	var pending []*corev1.Pod
	for _, p := range w.cluster.PendingPods() {
		if p.DeletionTimestamp == nil && !ownedByDaemonSet(p) {
			pending = append(pending, p)
		}
	}
	if len(pending) == 0 {
		return nil
	}
	snap := w.cluster.Snapshot(pending, nil)
	var ready []*scheduler.StateNode
	for _, n := range snap.Nodes {
		if n.Node == nil || !nodeReady(n.Node) || n.MarkedForDeletion || n.Node.DeletionTimestamp != nil {
			continue
		}
		// kube-scheduler counts the pods bound to a node, not those Stowage
		// nominated to it.
		bound := *n
		bound.Pods = slices.DeleteFunc(slices.Clone(n.Pods), func(p *corev1.Pod) bool { return p.Spec.NodeName != n.Node.Name })
		ready = append(ready, &bound)
	}
	snap.Nodes, snap.NodePools, snap.InstanceTypes = ready, nil, nil
	results := scheduler.Solve(snap, scheduler.Options{})
	for _, pl := range results.Existing {
		if err := w.bind(ctx, pl.Pod, pl.Node); err != nil {
			return err
		}
	}
	for _, u := range results.Unschedulable {
		if err := w.markUnschedulable(ctx, u.Pod, u.Reason); err != nil {
			return err
		}
	}
	return nil
}

func (w *world) bind(ctx context.Context, pod *corev1.Pod, node string) error {
	bound := pod.DeepCopy()
	bound.Spec.NodeName = node
	setScheduled(bound, corev1.ConditionTrue, "", "", w.clk.Now())
	if err := w.kube.Update(ctx, bound); err != nil {
		return fmt.Errorf("binding pod %s/%s to %s: %w", pod.Namespace, pod.Name, node, err)
	}
	if sp, ok := w.pods[pod.Namespace+"/"+pod.Name]; ok {
		sp.pod, sp.bound, sp.node = bound, w.clk.Now(), node
		sp.runningAt = sp.bound.Add(w.draw(w.s.Spec.PodStartup))
	}
	return nil
}

func (w *world) markUnschedulable(ctx context.Context, pod *corev1.Pod, reason string) error {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonUnschedulable {
			return nil
		}
	}
	marked := pod.DeepCopy()
	setScheduled(marked, corev1.ConditionFalse, corev1.PodReasonUnschedulable, reason, w.clk.Now())
	if err := w.kube.Status().Update(ctx, marked); err != nil {
		return fmt.Errorf("marking pod %s/%s unschedulable: %w", pod.Namespace, pod.Name, err)
	}
	if sp, ok := w.pods[pod.Namespace+"/"+pod.Name]; ok {
		sp.pod = marked
	}
	w.unschedulable(marked)
	return nil
}

func setScheduled(pod *corev1.Pod, status corev1.ConditionStatus, reason, message string, now time.Time) {
	cond := corev1.PodCondition{Type: corev1.PodScheduled, Status: status, Reason: reason, Message: message,
		LastTransitionTime: metav1.NewTime(now)}
	for i, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			pod.Status.Conditions[i] = cond
			return
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, cond)
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func ownedByDaemonSet(pod *corev1.Pod) bool {
	owner := metav1.GetControllerOf(pod)
	return owner != nil && owner.Kind == "DaemonSet"
}
