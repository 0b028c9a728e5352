package lifecycle

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowevents "github.com/stowage-dev/stowage/controller/events"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
)

// Reasons a Registered claim is not yet Initialized.
const (
	ReasonNodeNotReady          = "NodeNotReady"
	ReasonStartupTaintsExist    = "StartupTaintsExist"
	ReasonEphemeralTaintsExist  = "EphemeralTaintsExist"
	ReasonResourceNotRegistered = "ResourceNotRegistered"
)

// ephemeralTaints are put on new nodes by Kubernetes or Stowage and lifted
// once the node works; a node carrying one is not yet usable.
var ephemeralTaints = []corev1.Taint{
	{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute},
	{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute},
	v1alpha1.UnregisteredNoExecuteTaint,
}

// initialize marks a Registered claim Initialized once its Node is Ready, its
// startup and ephemeral taints are gone, every extended resource the claim
// requested shows in the Node's allocatable, and the pods of the DaemonSets
// that run on it are bound (or DaemonSetTimeout has passed); it then lifts
// the cordon registration put on the Node. Initialized, once True, stays
// True. Node and DaemonSet pod updates trigger the next check.
func (c *Controller) initialize(ctx context.Context, claim *v1alpha1.NodeClaim) (outcome, error) {
	if !nodeclaim.IsTrue(claim, v1alpha1.ConditionRegistered) || nodeclaim.IsTrue(claim, v1alpha1.ConditionInitialized) {
		return outcome{}, nil
	}
	node, err := nodeclaim.NodeForClaim(ctx, c.kube, claim)
	if err != nil {
		return outcome{}, err
	}
	pool, err := nodeclaim.PoolFor(ctx, c.kube, claim)
	if err != nil {
		return outcome{}, err
	}
	reason, message := notInitialized(claim, pool, node)
	var wait time.Duration
	if reason == "" {
		if message, wait, err = c.daemonSetsPending(ctx, claim, node); err != nil {
			return outcome{}, err
		}
		if message != "" {
			reason = ReasonDaemonSetPodsNotBound
		} else if err := c.uncordon(ctx, node); err != nil {
			return outcome{}, err
		}
	}
	if err := c.patchStatus(ctx, claim, func(now time.Time) {
		if reason != "" {
			nodeclaim.SetCondition(claim, v1alpha1.ConditionInitialized, metav1.ConditionUnknown, reason, message, now)
			return
		}
		nodeclaim.SetCondition(claim, v1alpha1.ConditionInitialized, metav1.ConditionTrue, v1alpha1.ConditionInitialized, "", now)
	}); err != nil || reason != "" {
		return outcome{requeueAfter: wait}, err
	}
	c.recordInitialized(claim, node)
	return outcome{}, nil
}

func (c *Controller) recordInitialized(claim *v1alpha1.NodeClaim, node *corev1.Node) {
	Initialized.WithLabelValues(poolName(claim)).Inc()
	if launched := nodeclaim.Condition(claim, v1alpha1.ConditionLaunched); launched != nil {
		// Launched's transition time is the launch, on the injected clock.
		StartupDuration.WithLabelValues(poolName(claim)).Observe(c.clk.Since(launched.LastTransitionTime.Time).Seconds())
	}
	c.log.Info("initialized nodeclaim", "nodeclaim", claim.Name, "nodepool", poolName(claim), "node", node.Name)
	stowevents.Publish(c.recorder, initializedEvent(claim, node))
	if diffs := allocatableDiffs(claim.Status.Allocatable, node.Status.Allocatable); len(diffs) > 0 {
		for _, d := range diffs {
			AllocatableMismatch.WithLabelValues(string(d.resource), poolName(claim)).Inc()
		}
		c.log.Warn("node allocatable differs from the prediction", "nodeclaim", claim.Name, "nodepool", poolName(claim),
			"node", node.Name, "differences", describeDiffs(diffs))
		stowevents.Publish(c.recorder, allocatableMismatchEvent(claim, node, describeDiffs(diffs)))
	}
}

// allocatableDiff is one resource whose registered allocatable is not the
// predicted one.
type allocatableDiff struct {
	resource              corev1.ResourceName
	predicted, registered resource.Quantity
}

// allocatableDiffs compares the allocatable predicted at launch with the
// Node's, resource by resource (a resource one side lacks counts as zero);
// nothing when nothing was predicted.
func allocatableDiffs(predicted, registered corev1.ResourceList) []allocatableDiff {
	if len(predicted) == 0 {
		return nil
	}
	names := map[corev1.ResourceName]bool{}
	for n := range predicted {
		names[n] = true
	}
	for n := range registered {
		names[n] = true
	}
	var out []allocatableDiff
	for _, n := range slices.Sorted(maps.Keys(names)) {
		p, r := predicted[n], registered[n]
		if p.Cmp(r) != 0 {
			out = append(out, allocatableDiff{n, p, r})
		}
	}
	return out
}

func describeDiffs(diffs []allocatableDiff) string {
	parts := make([]string, len(diffs))
	for i, d := range diffs {
		parts[i] = fmt.Sprintf("%s predicted %s, registered %s", d.resource, d.predicted.String(), d.registered.String())
	}
	return strings.Join(parts, "; ")
}

// notInitialized returns why the Node is not yet usable, or "" when it is.
func notInitialized(claim *v1alpha1.NodeClaim, pool *v1alpha1.NodePool, node *corev1.Node) (reason, message string) {
	if node == nil {
		return ReasonNodeNotFound, "the registered node is gone"
	}
	if !nodeReady(node) {
		return ReasonNodeNotReady, fmt.Sprintf("node %s is not Ready", node.Name)
	}
	tmpl := poolTemplate(pool).Spec
	for _, startup := range [][]corev1.Taint{claim.Spec.StartupTaints, tmpl.StartupTaints} {
		if t, ok := firstPresent(node.Spec.Taints, startup); ok {
			return ReasonStartupTaintsExist, fmt.Sprintf("startup taint %s is still on node %s", t.ToString(), node.Name)
		}
	}
	if t, ok := firstPresent(node.Spec.Taints, ephemeralTaints); ok {
		return ReasonEphemeralTaintsExist, fmt.Sprintf("taint %s is still on node %s", t.ToString(), node.Name)
	}
	if name, ok := missingExtendedResource(claim.Spec.Resources.Requests, node.Status.Allocatable); ok {
		return ReasonResourceNotRegistered, fmt.Sprintf("resource %s is not in node %s's allocatable", name, node.Name)
	}
	return "", ""
}

func nodeReady(node *corev1.Node) bool {
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// firstPresent returns the first of want found on the node (key and effect).
func firstPresent(onNode, want []corev1.Taint) (corev1.Taint, bool) {
	for _, t := range want {
		if hasTaint(onNode, t) {
			return t, true
		}
	}
	return corev1.Taint{}, false
}

// missingExtendedResource returns an extended resource (a device plugin's,
// such as nvidia.com/gpu) requested but not yet advertised in allocatable.
func missingExtendedResource(requested, allocatable corev1.ResourceList) (corev1.ResourceName, bool) {
	for _, name := range slices.Sorted(maps.Keys(requested)) {
		if quantity := requested[name]; !isExtended(name) || quantity.IsZero() {
			continue
		}
		if got, ok := allocatable[name]; !ok || got.IsZero() {
			return name, true
		}
	}
	return "", false
}

// isExtended reports whether a resource is neither native (cpu, memory, pods,
// ephemeral-storage, kubernetes.io/...) nor hugepages.
func isExtended(name corev1.ResourceName) bool {
	s := string(name)
	if !strings.Contains(s, "/") || strings.Contains(s, "kubernetes.io/") {
		return false
	}
	return !strings.HasPrefix(s, corev1.ResourceHugePagesPrefix)
}
