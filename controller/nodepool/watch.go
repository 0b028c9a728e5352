package nodepool

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// PoolOfClaim maps a NodeClaim to its pool, by the stowage.dev/nodepool
// label; a claim without one maps to nothing.
func PoolOfClaim(_ context.Context, o client.Object) []reconcile.Request {
	pool := o.GetLabels()[v1alpha1.LabelNodePool]
	if pool == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: pool}}}
}

// poolsOfClass maps a NodeClass to the pools whose NodeClassRef names it.
func (c *Controller) poolsOfClass(ctx context.Context, o client.Object) []reconcile.Request {
	pools := &v1alpha1.NodePoolList{}
	if err := c.kube.List(ctx, pools); err != nil {
		c.log.Error("listing nodepools for a nodeclass change", "nodeclass", o.GetName(), "error", err)
		return nil
	}
	var out []reconcile.Request
	for i := range pools.Items {
		if ref := pools.Items[i].Spec.Template.Spec.NodeClassRef; ref != nil && ref.Name == o.GetName() {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: pools.Items[i].Name}})
		}
	}
	return out
}

// ClaimCounted passes claim creations and deletions, and the updates that
// change what a pool's status counts: the pool label, the capacity, or the
// start of the deletion.
func ClaimCounted() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		before, okBefore := e.ObjectOld.(*v1alpha1.NodeClaim)
		after, okAfter := e.ObjectNew.(*v1alpha1.NodeClaim)
		if !okBefore || !okAfter {
			return true
		}
		return before.Labels[v1alpha1.LabelNodePool] != after.Labels[v1alpha1.LabelNodePool] ||
			before.DeletionTimestamp.IsZero() != after.DeletionTimestamp.IsZero() ||
			!equality.Semantic.DeepEqual(before.Status.Capacity, after.Status.Capacity)
	}}
}

// ClassReadiness passes NodeClass creations and deletions, and the updates
// that change its Ready condition's status or message.
func ClassReadiness() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		before, okBefore := e.ObjectOld.(*v1alpha1.NodeClass)
		after, okAfter := e.ObjectNew.(*v1alpha1.NodeClass)
		if !okBefore || !okAfter {
			return true
		}
		b := meta.FindStatusCondition(before.Status.Conditions, v1alpha1.ConditionReady)
		a := meta.FindStatusCondition(after.Status.Conditions, v1alpha1.ConditionReady)
		if a == nil || b == nil {
			return a != b
		}
		return a.Status != b.Status || a.Message != b.Message
	}}
}
