// Package expiration replaces nodes at their NodeClaim's expireAfter, as
// Karpenter v1 does: forcefully, whatever the disruption budgets say (so a
// budget cannot name it; see v1alpha1.DisruptionReasons), with the drain
// bounded by the claim's terminationGracePeriod. Deleting the claim is the
// whole of it: the provisioner counts the pods of a node being deleted as
// pending and launches their replacement at once, and the termination
// controller drains the node only once that replacement is Ready (or its
// drain-by time has come), then terminates it.
package expiration

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowevents "github.com/stowage-dev/stowage/controller/events"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
)

// Name names the controller in logs, metrics and events.
const Name = "nodeclaim-expiration"

// Options tunes the controller; the zero value logs nothing and, once
// registered, publishes through the manager's recorder.
type Options struct {
	Logger   hclog.Logger
	Recorder events.EventRecorder
}

// Controller deletes each NodeClaim at its expiry: its launch plus its
// spec.expireAfter. The expiry is an alarm on the injected clock, so that a
// new leader honours it and a simulation reaches it.
type Controller struct {
	clk      clock.Clock
	kube     client.Client
	log      hclog.Logger
	recorder events.EventRecorder
	alarms   *nodeclaim.Alarms
}

// New returns a controller reading and deleting claims through kube.
func New(clk clock.Clock, kube client.Client, opts Options) *Controller {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	return &Controller{clk: clk, kube: kube, log: opts.Logger.Named(Name), recorder: opts.Recorder, alarms: nodeclaim.NewAlarms(clk)}
}

// Alarms are the controller's expiry alarms, for a caller that drives its
// reconciles itself (the simulator).
func (c *Controller) Alarms() *nodeclaim.Alarms { return c.alarms }

// +kubebuilder:rbac:groups=stowage.dev,resources=nodeclaims,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Register adds the controller to mgr: it watches NodeClaims and its alarms.
func (c *Controller) Register(mgr manager.Manager) error {
	if c.recorder == nil {
		c.recorder = mgr.GetEventRecorder(Name)
	}
	return builder.ControllerManagedBy(mgr).Named(Name).For(&v1alpha1.NodeClaim{}).WatchesRawSource(c.alarms).Complete(c)
}

// Reconcile deletes the claim once it has expired, and otherwise sets an
// alarm for its expiry. A claim not yet launched, being deleted, or with
// expireAfter Never has none.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	claim := &v1alpha1.NodeClaim{}
	if err := c.kube.Get(ctx, req.NamespacedName, claim); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	expires, ok := Expiry(claim)
	if !ok || !claim.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	if c.clk.Now().Before(expires) {
		c.alarms.Set(req, expires)
		return reconcile.Result{}, nil
	}
	if err := c.kube.Delete(ctx, claim, client.Preconditions{UID: &claim.UID}); client.IgnoreNotFound(err) != nil {
		return reconcile.Result{}, fmt.Errorf("deleting expired nodeclaim %s: %w", claim.Name, err)
	}
	pool := claim.Labels[v1alpha1.LabelNodePool]
	Expired.WithLabelValues(pool).Inc()
	c.log.Info("deleting expired nodeclaim", "nodeclaim", claim.Name, "nodepool", pool, "node", claim.Status.NodeName,
		"instance_id", nodeclaim.InstanceID(claim.Status.ProviderID), "reason", ReasonExpired,
		"expire_after", claim.Spec.ExpireAfter.String())
	stowevents.Publish(c.recorder, expiredEvent(claim, expires))
	return reconcile.Result{}, nil
}

// Expiry is when the claim expires: its launch (the Launched condition's
// transition, on the controllers' clock) plus spec.expireAfter; ok is false
// while it has not launched, or with expireAfter unset or Never.
func Expiry(claim *v1alpha1.NodeClaim) (at time.Time, ok bool) {
	after := claim.Spec.ExpireAfter
	launched := meta.FindStatusCondition(claim.Status.Conditions, v1alpha1.ConditionLaunched)
	if after == nil || after.Duration == nil || launched == nil || launched.Status != "True" {
		return time.Time{}, false
	}
	return launched.LastTransitionTime.Add(*after.Duration), true
}
