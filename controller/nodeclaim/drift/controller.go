// Package drift detects NodeClaims whose node no longer matches what their
// NodePool and NodeClass ask for, and sets their Drifted condition; the
// disruption controller's Drift method reads the condition and replaces them
// within the Drifted budgets. Detection is apart from decision, as in
// Karpenter: the condition is the record, so a new leader, kubectl and the
// Terraform provider all see the same thing.
//
// A claim has drifted when, in this order:
//   - its NodePool's template hash (v1alpha1.NodePoolHash: labels,
//     annotations, taints, startup taints, NodeClass reference; not the
//     requirements) differs from the one recorded at launch;
//   - its NodeClass's hash (v1alpha1.NodeClassHash: kubelet settings, disks,
//     IAM, user data, ...) differs from the one recorded at launch;
//   - a label of the claim no longer meets its pool's requirements (a
//     narrowed requirement; widening one drifts nothing);
//   - the cloud says the instance differs from what the NodeClass resolves to
//     now (CloudProvider.IsDrifted: image, subnets, security groups).
//
// Hashes recorded under another v1alpha1.HashVersion are not compared, so
// that a new formula does not drift every node.
package drift

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	stowevents "github.com/stowage-dev/stowage/controller/events"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
)

// Name names the controller in logs, metrics and events.
const Name = "nodeclaim-drift"

// DefaultPollInterval is how often a claim is checked again for drift the
// cluster does not announce (a new image behind an alias, a subnet's tags).
const DefaultPollInterval = 5 * time.Minute

// conflictRequeue is how soon a write that lost a race is retried.
const conflictRequeue = 250 * time.Millisecond

// Options tunes the controller; the zero value uses the defaults.
type Options struct {
	// PollInterval between checks of one claim; DefaultPollInterval when zero.
	PollInterval time.Duration
	Logger       hclog.Logger
	Recorder     events.EventRecorder
}

// Controller sets the Drifted condition of NodeClaims.
type Controller struct {
	clk      clock.Clock
	kube     client.Client
	cloud    cloudprovider.CloudProvider
	opts     Options
	log      hclog.Logger
	recorder events.EventRecorder
}

// New returns a controller reading through kube and asking cloud.
func New(clk clock.Clock, kube client.Client, cloud cloudprovider.CloudProvider, opts Options) *Controller {
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	return &Controller{clk: clk, kube: kube, cloud: cloud, opts: opts, log: opts.Logger.Named(Name), recorder: opts.Recorder}
}

// +kubebuilder:rbac:groups=stowage.dev,resources=nodeclaims,verbs=get;list;watch
// +kubebuilder:rbac:groups=stowage.dev,resources=nodeclaims/status,verbs=patch
// +kubebuilder:rbac:groups=stowage.dev,resources=nodepools;nodeclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Register adds the controller to mgr: it watches NodeClaims, and the pools
// and classes they are made from.
func (c *Controller) Register(mgr manager.Manager) error {
	if c.recorder == nil {
		c.recorder = mgr.GetEventRecorder(Name)
	}
	return builder.ControllerManagedBy(mgr).Named(Name).
		For(&v1alpha1.NodeClaim{}).
		Watches(&v1alpha1.NodePool{}, handler.EnqueueRequestsFromMapFunc(c.claimsOf)).
		Watches(&v1alpha1.NodeClass{}, handler.EnqueueRequestsFromMapFunc(c.claimsOf)).
		Complete(c)
}

// Reconcile sets the claim's Drifted condition True with the first reason
// found, or removes it, and checks again at the next multiple of
// PollInterval. A claim being
// deleted, not yet launched, or whose pool is gone is left as it is.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	claim := &v1alpha1.NodeClaim{}
	if err := c.kube.Get(ctx, req.NamespacedName, claim); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !claim.DeletionTimestamp.IsZero() || !nodeclaim.IsTrue(claim, v1alpha1.ConditionLaunched) {
		return reconcile.Result{}, nil
	}
	pool, err := nodeclaim.PoolFor(ctx, c.kube, claim)
	if err != nil || pool == nil {
		return reconcile.Result{}, err
	}
	reason, message, err := c.drifted(ctx, claim, pool)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("checking nodeclaim %s for drift: %w", claim.Name, err)
	}
	if err := c.record(ctx, claim, reason, message); err != nil {
		if apierrors.IsConflict(err) {
			return reconcile.Result{RequeueAfter: conflictRequeue}, nil
		}
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: c.untilNextPoll()}, nil
}

// untilNextPoll is how long until the next multiple of PollInterval on the
// clock: every claim is checked again at the same instants, rather than at
// as many instants as there are claims (which a simulation would each step
// through).
func (c *Controller) untilNextPoll() time.Duration {
	now := c.clk.Now()
	return now.Truncate(c.opts.PollInterval).Add(c.opts.PollInterval).Sub(now)
}

// record writes the condition when it changes, with a metric, a log line and
// an event when the claim drifts.
func (c *Controller) record(ctx context.Context, claim *v1alpha1.NodeClaim, reason, message string) error {
	if unchanged(claim, reason, message) {
		return nil
	}
	stored := claim.DeepCopy()
	if reason == "" {
		meta.RemoveStatusCondition(&claim.Status.Conditions, v1alpha1.ConditionDrifted)
	} else {
		nodeclaim.SetCondition(claim, v1alpha1.ConditionDrifted, metav1.ConditionTrue, reason, message, c.clk.Now())
	}
	if err := c.kube.Status().Patch(ctx, claim, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("setting the drifted condition of nodeclaim %s: %w", claim.Name, err)
	}
	pool := claim.Labels[v1alpha1.LabelNodePool]
	if reason == "" {
		c.log.Info("nodeclaim no longer drifted", "nodeclaim", claim.Name, "nodepool", pool)
		return nil
	}
	Drifted.WithLabelValues(pool, reason).Inc()
	c.log.Info("nodeclaim drifted", "nodeclaim", claim.Name, "nodepool", pool, "node", claim.Status.NodeName, "reason", reason, "why", message)
	stowevents.Publish(c.recorder, driftedEvent(claim, reason, message))
	return nil
}

// unchanged reports whether the claim's Drifted condition already says what
// was found: checked before copying the claim, as most checks find no change.
func unchanged(claim *v1alpha1.NodeClaim, reason, message string) bool {
	cond := nodeclaim.Condition(claim, v1alpha1.ConditionDrifted)
	if reason == "" {
		return cond == nil
	}
	return cond != nil && cond.Status == metav1.ConditionTrue && cond.Reason == nodeclaim.ConditionReason(reason) &&
		cond.Message == message && cond.ObservedGeneration == claim.Generation
}

// claimsOf maps a NodePool or NodeClass to the claims made from it.
func (c *Controller) claimsOf(ctx context.Context, o client.Object) []reconcile.Request {
	list := &v1alpha1.NodeClaimList{}
	opts := []client.ListOption{}
	_, isPool := o.(*v1alpha1.NodePool)
	if isPool {
		opts = append(opts, client.MatchingLabels{v1alpha1.LabelNodePool: o.GetName()})
	}
	if err := c.kube.List(ctx, list, opts...); err != nil {
		c.log.Debug("listing the nodeclaims of a changed pool or class", "name", o.GetName(), "error", err)
		return nil
	}
	var out []reconcile.Request
	for _, claim := range list.Items {
		if isPool || claim.Spec.NodeClassRef != nil && claim.Spec.NodeClassRef.Name == o.GetName() {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&claim)})
		}
	}
	return out
}
