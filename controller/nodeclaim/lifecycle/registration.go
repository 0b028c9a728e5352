package lifecycle

import (
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowevents "github.com/stowage-dev/stowage/controller/events"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
)

// ReasonNodeNotFound says no Node has (yet) registered with the claim's provider id.
const ReasonNodeNotFound = "NodeNotFound"

// register pairs a Launched claim with the Node whose provider id matches,
// makes that Node Stowage's (labels, taints, finalizer, owner), and records
// the Node's name. Until the Node appears the claim waits, without polling:
// the Node's events wake the claim its provider id names, and the claim's
// own update that records its provider id wakes it too (providerIDChanged),
// so that a Node whose event came while the id was still being written, and
// so named no claim, is found then. Liveness bounds the wait.
func (c *Controller) register(ctx context.Context, claim *v1alpha1.NodeClaim) (outcome, error) {
	if !nodeclaim.IsTrue(claim, v1alpha1.ConditionLaunched) || nodeclaim.IsTrue(claim, v1alpha1.ConditionRegistered) {
		return outcome{}, nil
	}
	node, err := nodeclaim.NodeForClaim(ctx, c.kube, claim)
	if err != nil {
		return outcome{}, err
	}
	if node == nil {
		return outcome{}, c.patchStatus(ctx, claim, func(now time.Time) {
			nodeclaim.SetCondition(claim, v1alpha1.ConditionRegistered, metav1.ConditionUnknown, ReasonNodeNotFound,
				"no node has registered with provider id "+claim.Status.ProviderID, now)
		})
	}
	pool, err := nodeclaim.PoolFor(ctx, c.kube, claim)
	if err != nil {
		return outcome{}, err
	}
	if err := c.adoptNode(ctx, claim, pool, node); err != nil {
		return outcome{}, err
	}
	if err := c.patchStatus(ctx, claim, func(now time.Time) {
		claim.Status.NodeName = node.Name
		nodeclaim.SetCondition(claim, v1alpha1.ConditionRegistered, metav1.ConditionTrue, v1alpha1.ConditionRegistered, "", now)
	}); err != nil {
		return outcome{}, err
	}
	Registered.WithLabelValues(poolName(claim)).Inc()
	c.log.Info("registered nodeclaim", "nodeclaim", claim.Name, "nodepool", poolName(claim), "node", node.Name,
		"instance_id", nodeclaim.InstanceID(claim.Status.ProviderID))
	stowevents.Publish(c.recorder, registeredEvent(claim, node))
	return outcome{}, nil
}

// adoptNode applies the pool's and the claim's labels to the Node, and on
// first registration their taints and startup taints, lifting the
// unregistered taint, and cordons it until its DaemonSet pods are bound; it adds the termination finalizer and makes the claim
// the Node's owner. The write fails on a concurrent change to the Node, so
// that no taint another agent just set or removed is lost.
func (c *Controller) adoptNode(ctx context.Context, claim *v1alpha1.NodeClaim, pool *v1alpha1.NodePool, node *corev1.Node) error {
	stored := node.DeepCopy()
	firstTime := node.Labels[nodeclaim.LabelRegistered] != "true"
	node.Labels = mergeLabels(node.Labels, poolTemplate(pool).ObjectMeta.Labels, claim.Labels,
		map[string]string{nodeclaim.LabelRegistered: "true"})
	if firstTime {
		node.Spec.Taints = registrationTaints(node.Spec.Taints, claim, pool)
		cordon(node) // until its DaemonSet pods are bound: see daemonsets.go
	}
	controllerutil.AddFinalizer(node, v1alpha1.TerminationFinalizer)
	addOwner(node, claim)
	if equality.Semantic.DeepEqual(stored, node) {
		return nil
	}
	if err := c.kube.Patch(ctx, node, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("applying nodeclaim %s to node %s: %w", claim.Name, node.Name, err)
	}
	return nil
}

// poolTemplate returns the pool's template, or an empty one without a pool.
func poolTemplate(pool *v1alpha1.NodePool) v1alpha1.NodeClaimTemplate {
	if pool == nil {
		return v1alpha1.NodeClaimTemplate{}
	}
	return pool.Spec.Template
}

// mergeLabels copies every set of labels onto base, later sets winning.
func mergeLabels(base map[string]string, sets ...map[string]string) map[string]string {
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	for _, set := range sets {
		maps.Copy(out, set)
	}
	return out
}

// registrationTaints returns the Node's taints without the unregistered
// taint, plus the claim's and the pool's taints and startup taints that are
// not already there (matched by key and effect).
func registrationTaints(existing []corev1.Taint, claim *v1alpha1.NodeClaim, pool *v1alpha1.NodePool) []corev1.Taint {
	out := make([]corev1.Taint, 0, len(existing))
	for _, t := range existing {
		if !t.MatchTaint(&v1alpha1.UnregisteredNoExecuteTaint) {
			out = append(out, t)
		}
	}
	tmpl := poolTemplate(pool).Spec
	for _, set := range [][]corev1.Taint{claim.Spec.Taints, claim.Spec.StartupTaints, tmpl.Taints, tmpl.StartupTaints} {
		for _, t := range set {
			if !hasTaint(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

func hasTaint(taints []corev1.Taint, t corev1.Taint) bool {
	for i := range taints {
		if taints[i].MatchTaint(&t) {
			return true
		}
	}
	return false
}

// addOwner makes the claim an owner of the Node, once.
func addOwner(node *corev1.Node, claim *v1alpha1.NodeClaim) {
	for _, ref := range node.OwnerReferences {
		if ref.UID == claim.UID {
			return
		}
	}
	node.OwnerReferences = append(node.OwnerReferences, metav1.OwnerReference{
		APIVersion:         v1alpha1.SchemeGroupVersion.String(),
		Kind:               "NodeClaim",
		Name:               claim.Name,
		UID:                claim.UID,
		BlockOwnerDeletion: ptr.To(true),
	})
}

// providerIDChanged passes a NodeClaim update that sets or changes the
// claim's provider id, and nothing else: of the claim's status writes, the
// one that records the launch is the one registration must react to.
func providerIDChanged() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			before, ok1 := e.ObjectOld.(*v1alpha1.NodeClaim)
			after, ok2 := e.ObjectNew.(*v1alpha1.NodeClaim)
			return ok1 && ok2 && before.Status.ProviderID != after.Status.ProviderID
		},
	}
}
