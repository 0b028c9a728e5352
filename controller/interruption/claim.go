package interruption

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// ClaimControllerName names the controller that replaces marked NodeClaims.
const ClaimControllerName = "interruption-nodeclaim"

// ClaimReconciler returns the reconciler of NodeClaims the Lambda marked. An
// instance interrupted while it boots has no Node to mark, so the Lambda marks
// its claim instead; the claim is replaced at once, as a marked Node's is.
// Otherwise the Node would register after the notice, unmarked, take pods,
// and go down with them at the deadline.
func (c *Controller) ClaimReconciler() reconcile.Reconciler { return claimReconciler{c} }

type claimReconciler struct{ *Controller }

// Reconcile acts on the claim's mark once, as Controller.Reconcile acts on a
// Node's.
func (r claimReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	key := "nodeclaim/" + req.Name
	claim := &v1alpha1.NodeClaim{}
	if err := r.kube.Get(ctx, req.NamespacedName, claim); err != nil {
		if apierrors.IsNotFound(err) {
			r.seen.forget(key)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	m, ok := Marks(claim)
	if !ok {
		r.seen.forget(key)
		return reconcile.Result{}, nil
	}
	t := claimTarget(claim)
	p := r.seen.get(t, m)
	if p.done {
		return reconcile.Result{}, nil
	}
	err := r.act(ctx, t, claim, m, &p)
	r.seen.put(t.key, p)
	return asResult(err)
}
