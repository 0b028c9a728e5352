package simulate

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// schedulePods is kube-scheduler's part: each pending pod, highest priority
// first (its active queue's order), is bound to the Ready node that passes
// its filters (resources, taints, node affinity) with the most room left (the
// default LeastAllocated score), or to the node where preempting pods of
// lower priority makes room (preemption.go); pods with inter-pod affinity or
// hard topology spread are placed by the solver's predicates instead. The
// rest are marked Unschedulable, which is what the autoscalers watch for. It
// tries a pod when kube-scheduler's queue would (schedqueue.go).
func (w *world) schedulePods(ctx context.Context) error {
	now := w.clk.Now()
	if w.dirty {
		w.eventAt = now
	}
	if !w.dirty && !w.newPods && (w.nextRetry.IsZero() || now.Before(w.nextRetry)) {
		return nil
	}
	w.dirty, w.newPods = false, false
	var simple, topological []*simPod
	for _, sp := range w.dueForRetry() {
		if hasPodTopology(sp.pod) {
			topological = append(topological, sp)
		} else {
			simple = append(simple, sp)
		}
	}
	if len(simple)+len(topological) == 0 {
		return nil
	}
	byPriority(simple)
	byPriority(topological)
	if err := w.scheduleSimple(ctx, simple); err != nil {
		return err
	}
	return w.scheduleTopological(ctx, topological)
}

// fitOrPreempt is the pod's best fit, else the node where preempting makes
// room for it (evicting the victims), else nil. pdbs is read once per pass,
// when first needed.
func (w *world) fitOrPreempt(ctx context.Context, nodes []*schedNode, sp *simPod, pdbs **pdbAllowance) (*schedNode, error) {
	if n := bestFit(nodes, sp); n != nil || !canPreempt(sp.pod) {
		return n, nil
	}
	if *pdbs == nil {
		a, err := w.pdbAllowance(ctx)
		if err != nil {
			return nil, err
		}
		*pdbs = a
	}
	return w.preempt(ctx, nodes, sp, *pdbs)
}

// byPriority orders pods as kube-scheduler's queue pops them: higher
// priority first, then in the order they came.
func byPriority(pods []*simPod) {
	slices.SortStableFunc(pods, func(a, b *simPod) int { return cmp.Compare(priority(b.pod), priority(a.pod)) })
}

// scheduleSimple binds each pod to its best fit, else preempts for it, else
// marks it Unschedulable.
func (w *world) scheduleSimple(ctx context.Context, pods []*simPod) error {
	nodes := w.schedulableNodes()
	var pdbs *pdbAllowance
	// Pods of one workload are alike: once one fits nowhere, even by
	// preempting, so do the rest in this pass.
	full := map[*workloadState]bool{}
	for _, sp := range pods {
		var n *schedNode
		if sp.workload == nil || !full[sp.workload] {
			var err error
			if n, err = w.fitOrPreempt(ctx, nodes, sp, &pdbs); err != nil {
				return err
			}
		}
		if n == nil {
			full[sp.workload] = true
			if err := w.markUnschedulable(ctx, sp, w.noNode("no node has room and matches")); err != nil {
				return err
			}
			continue
		}
		n.requested = n.requested.Add(sp.requests)
		if err := w.bind(ctx, sp, n.node.Name); err != nil {
			return err
		}
	}
	return nil
}

// schedNode is a Ready node as the scheduler model sees it.
type schedNode struct {
	node        *corev1.Node
	allocatable scheduling.Resources
	requested   scheduling.Resources
}

// schedulableNodes lists the Ready nodes that take pods, with what their bound
// pods request (kept as pods bind and go), in name order.
func (w *world) schedulableNodes() []*schedNode {
	out := make([]*schedNode, 0, len(w.nodeNames))
	for _, name := range w.nodeNames {
		node, ok := peek[*corev1.Node](w.kube.mirror, client.ObjectKey{Name: name})
		if !ok || !nodeReady(node) || node.DeletionTimestamp != nil || node.Spec.Unschedulable {
			continue
		}
		out = append(out, &schedNode{node: node, allocatable: w.allocatable(node), requested: w.requested[node.Name]})
	}
	return out
}

// nodeFit is a Node's allocatable, read from one stored version of it.
type nodeFit struct {
	node        *corev1.Node
	allocatable scheduling.Resources
}

// allocatable is the node's allocatable, read again only when the stored
// Node is another (stored objects are never changed in place).
func (w *world) allocatable(node *corev1.Node) scheduling.Resources {
	if f, ok := w.nodeFits[node.Name]; ok && f.node == node {
		return f.allocatable
	}
	f := nodeFit{node: node, allocatable: scheduling.FromList(node.Status.Allocatable)}
	w.nodeFits[node.Name] = f
	return f.allocatable
}

// bestFit is the node with the most room left (mean free fraction of CPU and
// memory) among those the pod passes every filter of; ties go to the first by name.
func bestFit(nodes []*schedNode, sp *simPod) *schedNode {
	var best *schedNode
	bestScore := -1.0
	affinity := nodeaffinity.GetRequiredNodeAffinity(sp.pod)
	for _, n := range nodes {
		// requests count the pod itself (Pods is 1), as NodeResourcesFit does.
		want := n.requested.Add(sp.requests)
		if !want.Fits(n.allocatable) || !matches(n, sp, affinity) {
			continue
		}
		score := freeFraction(n.allocatable.CPU, want.CPU) + freeFraction(n.allocatable.Memory, want.Memory)
		if score > bestScore {
			best, bestScore = n, score
		}
	}
	return best
}

// matches reports whether the pod tolerates the node's taints and its
// required node affinity matches the node.
func matches(n *schedNode, sp *simPod, affinity nodeaffinity.RequiredNodeAffinity) bool {
	if scheduling.Tolerates(n.node.Spec.Taints, sp.pod.Spec.Tolerations) != nil {
		return false
	}
	ok, _ := affinity.Match(n.node)
	return ok
}

func freeFraction(allocatable, used int64) float64 {
	if allocatable <= 0 {
		return 0
	}
	return float64(allocatable-used) / float64(allocatable)
}

// hasPodTopology reports whether the pod has inter-pod (anti-)affinity or a
// hard topology spread, which the simple filters do not check.
func hasPodTopology(pod *corev1.Pod) bool {
	if a := pod.Spec.Affinity; a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil) {
		return true
	}
	return slices.ContainsFunc(pod.Spec.TopologySpreadConstraints, func(c corev1.TopologySpreadConstraint) bool {
		return c.WhenUnsatisfiable == corev1.DoNotSchedule
	})
}

// scheduleTopological places pods with inter-pod constraints by the solver's
// predicates over the Ready nodes and the pods bound to them. The pods of the
// nodes that take none (not Ready, cordoned, tainted by a drain) still count
// towards spreads and affinity, as kube-scheduler counts them (its spreads'
// nodeTaintsPolicy is Ignore); terminating pods are gone at once here.
func (w *world) scheduleTopological(ctx context.Context, pods []*simPod) error {
	if len(pods) == 0 {
		return nil
	}
	pending := make([]*corev1.Pod, len(pods))
	for i, sp := range pods {
		pending[i] = sp.pod
	}
	snap := w.cluster.Snapshot(pending, nil)
	var ready []*scheduler.StateNode
	for _, n := range snap.Nodes {
		if n.Node == nil {
			continue
		}
		// kube-scheduler sees the node as it is, not as it will be once
		// initialized (without its claim, the solver keeps every taint), and
		// counts the pods bound to it, not those Stowage nominated to it.
		bound := scheduler.StateNode{Node: n.Node, MarkedForDeletion: !nodeReady(n.Node) || n.Node.Spec.Unschedulable ||
			n.MarkedForDeletion || n.Node.DeletionTimestamp != nil}
		bound.Pods = slices.DeleteFunc(slices.Clone(n.Pods), func(p *corev1.Pod) bool { return p.Spec.NodeName != n.Node.Name })
		ready = append(ready, &bound)
	}
	snap.Nodes, snap.NodePools, snap.InstanceTypes, snap.DaemonSets = ready, nil, nil, nil
	results := scheduler.Solve(snap, scheduler.Options{})
	for _, pl := range results.Existing {
		if err := w.bind(ctx, w.pods[pl.Pod.Namespace+"/"+pl.Pod.Name], pl.Node); err != nil {
			return err
		}
	}
	for _, u := range results.Unschedulable {
		if err := w.markUnschedulable(ctx, w.pods[u.Pod.Namespace+"/"+u.Pod.Name], w.noNode(u.Reason)); err != nil {
			return err
		}
	}
	return nil
}

func (w *world) bind(ctx context.Context, sp *simPod, node string) error {
	bound := sp.pod.DeepCopy()
	bound.Spec.NodeName = node
	setScheduled(bound, corev1.ConditionTrue, "", "", w.clk.Now())
	if err := w.kube.Update(ctx, bound); err != nil {
		return fmt.Errorf("binding pod %s to %s: %w", sp.key, node, err)
	}
	sp.pod, sp.bound, sp.node = bound, w.clk.Now(), node
	w.requested[node] = w.requested[node].Add(sp.requests)
	w.onNode[node] = append(w.onNode[node], sp)
	sp.runningAt = sp.bound.Add(w.draw(w.s.Spec.PodStartup))
	w.unbound--
	w.starting = append(w.starting, sp)
	return nil
}

// noNode is kube-scheduler's message for a pod no node takes: the count of
// every node in the cluster, then why.
func (w *world) noNode(why string) string {
	return fmt.Sprintf("0/%d nodes are available: %s", w.kube.mirror.count(&corev1.Node{}), why)
}

// markUnschedulable sets the pod's PodScheduled condition to Unschedulable
// with reason as its message. Like kube-scheduler, it writes the pod whenever
// the condition changes, the message included (the node count in it, for
// one): that update is what wakes an autoscaler's pod watch again.
func (w *world) markUnschedulable(ctx context.Context, sp *simPod, reason string) error {
	w.tried(sp)
	old := scheduledCondition(sp.pod)
	if old != nil && old.Status == corev1.ConditionFalse && old.Reason == corev1.PodReasonUnschedulable && old.Message == reason {
		return nil
	}
	// Only the status is written, and the pod kept is the stored one, which
	// the simulator only reads.
	marked := &corev1.Pod{Status: *sp.pod.Status.DeepCopy()}
	setScheduled(marked, corev1.ConditionFalse, corev1.PodReasonUnschedulable, reason, w.clk.Now())
	stored, err := w.kube.writePodStatus(client.ObjectKeyFromObject(sp.pod), sp.pod.ResourceVersion, marked.Status)
	if err != nil {
		return fmt.Errorf("marking pod %s unschedulable: %w", sp.key, err)
	}
	sp.pod = stored
	return nil
}

func scheduledCondition(pod *corev1.Pod) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == corev1.PodScheduled {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// setScheduled sets the PodScheduled condition; its transition time moves
// only when its status does, as the API's conditions do.
func setScheduled(pod *corev1.Pod, status corev1.ConditionStatus, reason, message string, now time.Time) {
	cond := corev1.PodCondition{Type: corev1.PodScheduled, Status: status, Reason: reason, Message: message,
		LastTransitionTime: metav1.NewTime(now)}
	if old := scheduledCondition(pod); old != nil {
		if old.Status == status {
			cond.LastTransitionTime = old.LastTransitionTime
		}
		*old = cond
		return
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
