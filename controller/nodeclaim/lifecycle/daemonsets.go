package lifecycle

import (
	"context"
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowevents "github.com/stowage-dev/stowage/controller/events"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// A new Node is registered cordoned (spec.unschedulable) and uncordoned by
// initialization once the pods of every DaemonSet that runs on it are bound,
// or DaemonSetTimeout after it became Ready, whichever comes first. The
// solver counted those pods' requests on the node; left open, kube-scheduler
// fills a fresh node with the pending workload pods before the DaemonSet
// controller's pods arrive, and they find no room (the reference has the
// same problem open: aws/karpenter-provider-aws#9269). DaemonSet pods
// tolerate the cordon (node.kubernetes.io/unschedulable), workload pods do
// not. The timeout keeps a broken DaemonSet (a bad image does not matter:
// bound is enough; a pod that can never be scheduled does) from holding a
// node forever.

// AnnotationDaemonSetCordon marks a Node that Stowage cordoned at
// registration, so that initialization lifts only its own cordon.
const AnnotationDaemonSetCordon = v1alpha1.Group + "/daemonset-cordon"

// DefaultDaemonSetTimeout is how long after the Node became Ready
// initialization waits for its DaemonSet pods to be bound.
const DefaultDaemonSetTimeout = time.Minute

// ReasonDaemonSetPodsNotBound says a DaemonSet that runs on the Node has no
// pod bound there yet.
const ReasonDaemonSetPodsNotBound = "DaemonSetPodsNotBound"

// daemonSetTolerations are the taints the DaemonSet controller makes every
// DaemonSet pod tolerate.
var daemonSetTolerations = []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable, corev1.TaintNodeDiskPressure,
	corev1.TaintNodeMemoryPressure, corev1.TaintNodePIDPressure, corev1.TaintNodeUnschedulable, corev1.TaintNodeNetworkUnavailable}

// cordon marks a Node registering for the first time unschedulable, with
// the annotation that says the cordon is Stowage's.
func cordon(node *corev1.Node) {
	node.Spec.Unschedulable = true
	if node.Annotations == nil {
		node.Annotations = map[string]string{}
	}
	node.Annotations[AnnotationDaemonSetCordon] = "true"
}

// daemonSetsPending returns why the cordoned Node should stay cordoned (a
// DaemonSet of it has no pod bound there) and when to look again, or ""
// once every such pod is bound or the wait has timed out.
func (c *Controller) daemonSetsPending(ctx context.Context, claim *v1alpha1.NodeClaim, node *corev1.Node) (string, time.Duration, error) {
	if node.Annotations[AnnotationDaemonSetCordon] != "true" {
		return "", 0, nil
	}
	missing, err := c.unboundDaemonSets(ctx, node)
	if err != nil || len(missing) == 0 {
		return "", 0, err
	}
	waited := c.clk.Since(readySince(claim, node))
	if waited >= c.opts.DaemonSetTimeout {
		c.log.Warn("uncordoning node without the pods of its daemonsets", "node", node.Name, "nodeclaim", claim.Name,
			"nodepool", poolName(claim), "daemonsets", missing, "waited", waited.String())
		stowevents.Publish(c.recorder, daemonSetsTimedOutEvent(claim, node, missing, c.opts.DaemonSetTimeout))
		return "", 0, nil
	}
	c.alarms.Set(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(claim)}, c.clk.Now().Add(c.opts.DaemonSetTimeout-waited))
	return fmt.Sprintf("daemonset %s has no pod bound to node %s", missing[0], node.Name), c.opts.DaemonSetTimeout - waited, nil
}

// unboundDaemonSets lists, as namespace/name, the DaemonSets whose pod would
// run on the node and is not bound to it.
func (c *Controller) unboundDaemonSets(ctx context.Context, node *corev1.Node) ([]string, error) {
	daemonSets := &appsv1.DaemonSetList{}
	if err := c.kube.List(ctx, daemonSets); err != nil {
		return nil, fmt.Errorf("listing daemonsets: %w", err)
	}
	pods := &corev1.PodList{}
	if err := c.kube.List(ctx, pods, client.MatchingFields{nodeclaim.PodNodeNameField: node.Name}); err != nil {
		return nil, fmt.Errorf("listing the pods of node %s: %w", node.Name, err)
	}
	taints := slices.DeleteFunc(slices.Clone(node.Spec.Taints), func(t corev1.Taint) bool { return slices.Contains(daemonSetTolerations, t.Key) })
	var missing []string
	for i := range daemonSets.Items {
		ds := &daemonSets.Items[i]
		if !runsOn(ds, node, taints) || slices.ContainsFunc(pods.Items, func(p corev1.Pod) bool { return controlledBy(&p, ds) }) {
			continue
		}
		missing = append(missing, ds.Namespace+"/"+ds.Name)
	}
	slices.Sort(missing)
	return missing, nil
}

// runsOn reports whether the DaemonSet's pod tolerates taints and its node
// selector and required affinity admit the node, as the DaemonSet
// controller decides where to run a pod.
func runsOn(ds *appsv1.DaemonSet, node *corev1.Node, taints []corev1.Taint) bool {
	pod := &corev1.Pod{Spec: ds.Spec.Template.Spec}
	if scheduling.Tolerates(taints, pod.Spec.Tolerations) != nil {
		return false
	}
	ok, _ := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)
	return ok
}

func controlledBy(p *corev1.Pod, ds *appsv1.DaemonSet) bool {
	ref := metav1.GetControllerOf(p)
	return ref != nil && ref.Kind == "DaemonSet" && ref.Name == ds.Name && p.Namespace == ds.Namespace
}

// readySince is when the Node became Ready, or when the claim registered if
// the Node does not say.
func readySince(claim *v1alpha1.NodeClaim, node *corev1.Node) time.Time {
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady && !cond.LastTransitionTime.IsZero() {
			return cond.LastTransitionTime.Time
		}
	}
	if reg := nodeclaim.Condition(claim, v1alpha1.ConditionRegistered); reg != nil {
		return reg.LastTransitionTime.Time
	}
	return time.Time{}
}

// uncordon lifts the cordon Stowage put on the Node at registration.
func (c *Controller) uncordon(ctx context.Context, node *corev1.Node) error {
	if node.Annotations[AnnotationDaemonSetCordon] != "true" {
		return nil
	}
	stored := node.DeepCopy()
	node.Spec.Unschedulable = false
	delete(node.Annotations, AnnotationDaemonSetCordon)
	if err := c.kube.Patch(ctx, node, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("uncordoning node %s: %w", node.Name, err)
	}
	return nil
}

// claimForDaemonPod maps a bound DaemonSet pod to the claim of its node,
// whose initialization may be waiting for it.
func (c *Controller) claimForDaemonPod(ctx context.Context, o client.Object) []reconcile.Request {
	pod, ok := o.(*corev1.Pod)
	if !ok || pod.Spec.NodeName == "" {
		return nil
	}
	if ref := metav1.GetControllerOf(pod); ref == nil || ref.Kind != "DaemonSet" {
		return nil
	}
	node := &corev1.Node{}
	if err := c.kube.Get(ctx, client.ObjectKey{Name: pod.Spec.NodeName}, node); err != nil {
		return nil
	}
	return c.claimForNode(ctx, node)
}
