// Package nodepool keeps every NodePool's status current: status.resources
// sums the capacity of the pool's NodeClaims and counts them as "nodes" (what
// `kubectl get nodepools` prints as NODES and what its limits are measured
// against), and the Ready condition says whether the pool can launch, which
// it can once the NodeClass it names exists and is Ready. It also exports
// the pools' usage and limits as metrics.
package nodepool

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowevents "github.com/stowage-dev/stowage/controller/events"
)

// Name names the controller in logs, metrics and events.
const Name = "nodepool-status"

// conflictRequeue is how soon a write that lost a race is retried.
const conflictRequeue = 250 * time.Millisecond

// Options tunes the controller.
type Options struct {
	// Logger receives the controller's logs; nothing is logged when nil.
	Logger hclog.Logger
	// Recorder publishes events; Register uses the manager's when nil.
	Recorder events.EventRecorder
}

// Controller writes NodePool statuses.
type Controller struct {
	clk      clock.Clock
	kube     client.Client
	log      hclog.Logger
	recorder events.EventRecorder
}

// New returns a controller reading NodePools, NodeClaims and NodeClasses and
// writing NodePool statuses through kube; clk stamps condition transitions.
func New(clk clock.Clock, kube client.Client, opts Options) *Controller {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	return &Controller{clk: clk, kube: kube, log: opts.Logger.Named(Name), recorder: opts.Recorder}
}

// +kubebuilder:rbac:groups=stowage.dev,resources=nodepools;nodeclaims;nodeclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups=stowage.dev,resources=nodepools/status,verbs=patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Register adds the controller to mgr, watching NodePools (created or their
// spec changed), their NodeClaims (by the stowage.dev/nodepool label) and the
// NodeClasses they reference.
func (c *Controller) Register(mgr manager.Manager) error {
	if c.recorder == nil {
		c.recorder = mgr.GetEventRecorder(Name)
	}
	return builder.ControllerManagedBy(mgr).
		Named(Name).
		For(&v1alpha1.NodePool{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&v1alpha1.NodeClaim{}, handler.EnqueueRequestsFromMapFunc(PoolOfClaim),
			builder.WithPredicates(ClaimCounted())).
		Watches(&v1alpha1.NodeClass{}, handler.EnqueueRequestsFromMapFunc(c.poolsOfClass),
			builder.WithPredicates(ClassReadiness())).
		Complete(c)
}

// Reconcile recomputes the pool's resources and Ready condition, patches its
// status when they changed, reports Ready transitions and updates the usage
// and limit metrics.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pool := &v1alpha1.NodePool{}
	if err := c.kube.Get(ctx, req.NamespacedName, pool); err != nil {
		if apierrors.IsNotFound(err) {
			forget(req.Name)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	claims := &v1alpha1.NodeClaimList{}
	if err := c.kube.List(ctx, claims, client.MatchingLabels{v1alpha1.LabelNodePool: pool.Name}); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing the claims of nodepool %s: %w", pool.Name, err)
	}
	ready, err := c.readiness(ctx, pool)
	if err != nil {
		return reconcile.Result{}, err
	}
	before := meta.FindStatusCondition(pool.Status.Conditions, v1alpha1.ConditionReady).DeepCopy()
	next := *pool.Status.DeepCopy()
	next.Resources = Resources(claims.Items)
	meta.SetStatusCondition(&next.Conditions, ready)
	if !equality.Semantic.DeepEqual(pool.Status, next) {
		patch := client.MergeFrom(pool.DeepCopy())
		pool.Status = next
		if err := c.kube.Status().Patch(ctx, pool, patch); err != nil {
			if apierrors.IsConflict(err) {
				return reconcile.Result{RequeueAfter: conflictRequeue}, nil
			}
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
	}
	observe(pool)
	if before == nil || before.Status != ready.Status {
		c.log.Info("nodepool readiness changed", "nodepool", pool.Name, "ready", ready.Status, "reason", ready.Reason)
		stowevents.Publish(c.recorder, readinessEvent(pool, ready))
	}
	return reconcile.Result{}, nil
}

// readiness returns the pool's Ready condition, from its NodeClass's, with
// the injected clock's time (meta.SetStatusCondition keeps the old time while
// the status holds).
func (c *Controller) readiness(ctx context.Context, pool *v1alpha1.NodePool) (metav1.Condition, error) {
	var nc *v1alpha1.NodeClass
	if ref := pool.Spec.Template.Spec.NodeClassRef; ref != nil {
		nc = &v1alpha1.NodeClass{}
		if err := c.kube.Get(ctx, client.ObjectKey{Name: ref.Name}, nc); err != nil {
			if !apierrors.IsNotFound(err) {
				return metav1.Condition{}, fmt.Errorf("getting nodeclass %s of nodepool %s: %w", ref.Name, pool.Name, err)
			}
			nc = nil
		}
	}
	cond := Readiness(pool, nc)
	cond.ObservedGeneration = pool.Generation
	cond.LastTransitionTime = metav1.NewTime(c.clk.Now())
	return cond, nil
}
