package termination

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowevents "github.com/stowage-dev/stowage/controller/events"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
)

// nodeReconciler handles a Node deleted directly (kubectl delete node, the
// garbage collector). A Node whose claim still holds the finalizer is
// terminated by deleting that claim, so that there is one path; a Node no
// claim owns is drained and its instance terminated here.
type nodeReconciler struct {
	*terminator
}

func (r *nodeReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	node := &corev1.Node{}
	if err := r.kube.Get(ctx, req.NamespacedName, node); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if node.DeletionTimestamp.IsZero() || !controllerutil.ContainsFinalizer(node, v1alpha1.TerminationFinalizer) {
		return reconcile.Result{}, nil
	}
	claim, err := nodeclaim.ClaimForNode(ctx, r.kube, node)
	if err != nil {
		return reconcile.Result{}, err
	}
	if claim != nil && controllerutil.ContainsFinalizer(claim, v1alpha1.TerminationFinalizer) {
		return reconcile.Result{}, r.deleteClaim(ctx, claim, node)
	}
	// Nothing else will terminate this Node's instance: no claim names it.
	orphan := &v1alpha1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: node.Name},
		Status:     v1alpha1.NodeClaimStatus{ProviderID: node.Spec.ProviderID, NodeName: node.Name},
	}
	if wait, err := r.terminate(ctx, job{key: "node/" + node.Name, claim: orphan, node: node}); err != nil || wait > 0 {
		return asResult(wait, err)
	}
	return reconcile.Result{}, nil
}

func (r *nodeReconciler) deleteClaim(ctx context.Context, claim *v1alpha1.NodeClaim, node *corev1.Node) error {
	if !claim.DeletionTimestamp.IsZero() {
		return nil
	}
	if err := r.kube.Delete(ctx, claim); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting nodeclaim %s of deleted node %s: %w", claim.Name, node.Name, err)
	}
	r.log.Info("deleting nodeclaim: its node was deleted", "nodeclaim", claim.Name, "node", node.Name,
		"nodepool", claim.Labels[v1alpha1.LabelNodePool])
	stowevents.Publish(r.recorder, nodeDeletedEvent(claim, node))
	return nil
}

// NodeReconciler returns the reconciler Register adds for deleted Nodes, for a
// caller that drives reconciles itself (the simulator).
func (c *Controller) NodeReconciler() reconcile.Reconciler {
	return &nodeReconciler{terminator: c.terminator}
}
