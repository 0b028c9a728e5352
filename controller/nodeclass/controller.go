// Package nodeclass keeps every NodeClass's status current: what its
// subnet, security group and AMI selectors and its role resolve to, and the
// Ready condition `kubectl get nodeclasses` prints. The resolving is the
// cloud's (a Resolver); this controller writes the result, stamps the
// conditions with its clock and the class's generation, and re-resolves
// periodically, since the cloud side (a deleted subnet, a revoked IAM
// permission) changes without the NodeClass changing.
package nodeclass

import (
	"context"
	"strings"
	"sync"
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
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowevents "github.com/stowage-dev/stowage/controller/events"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
)

// Name names the controller in logs, metrics and events.
const Name = "nodeclass-status"

// DefaultResync is Options.Resync when left zero: how often a NodeClass is
// resolved again when nothing about it changed.
const DefaultResync = 5 * time.Minute

// conflictRequeue is how soon a write that lost a race is retried.
const conflictRequeue = 250 * time.Millisecond

// Resolver resolves a NodeClass against the cloud; controller/aws.CloudProvider
// implements it.
type Resolver interface {
	// Status returns the NodeClass's status: the resolved subnets, security
	// groups, AMIs and instance profile, and a Ready condition that is False,
	// with a message saying what to fix (e.g. the missing IAM action), when
	// they did not resolve. It cannot fail: a failure is a not-ready status.
	// The controller sets the conditions' transition times and generation.
	Status(ctx context.Context, nc *v1alpha1.NodeClass) v1alpha1.NodeClassStatus
}

// UserDataReviewer is what a Resolver may also do: name the settings of a
// NodeClass's userData that the cloud's own bootstrap settings replace.
type UserDataReviewer interface {
	// ReplacedUserData returns the settings' names (never their values,
	// which may be secrets); an error is reported by Status instead.
	ReplacedUserData(nc *v1alpha1.NodeClass) ([]string, error)
}

// Options tunes the controller; the zero value resyncs every DefaultResync.
type Options struct {
	// Resync is how often a NodeClass is resolved again when it did not change.
	Resync time.Duration
	// Logger receives the controller's logs; nothing is logged when nil.
	Logger hclog.Logger
	// Recorder publishes events; Register uses the manager's when nil.
	Recorder events.EventRecorder
}

// Controller writes NodeClass statuses.
type Controller struct {
	clk      clock.Clock
	kube     client.Client
	resolver Resolver
	opts     Options
	log      hclog.Logger
	recorder events.EventRecorder

	mu       sync.Mutex
	reviewed map[string]int64 // nodeclass name -> generation whose userData was reviewed
}

// New returns a controller reading and writing NodeClasses through kube and
// resolving them through resolver; clk stamps condition transitions.
func New(clk clock.Clock, kube client.Client, resolver Resolver, opts Options) *Controller {
	if opts.Resync <= 0 {
		opts.Resync = DefaultResync
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	return &Controller{clk: clk, kube: kube, resolver: resolver, opts: opts,
		log: opts.Logger.Named(Name), recorder: opts.Recorder, reviewed: map[string]int64{}}
}

// +kubebuilder:rbac:groups=stowage.dev,resources=nodeclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups=stowage.dev,resources=nodeclasses/status,verbs=patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Register adds the controller to mgr, watching NodeClasses for creation and
// spec changes (their own status writes do not wake it).
func (c *Controller) Register(mgr manager.Manager) error {
	if c.recorder == nil {
		c.recorder = mgr.GetEventRecorder(Name)
	}
	return builder.ControllerManagedBy(mgr).
		Named(Name).
		For(&v1alpha1.NodeClass{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Complete(c)
}

// Reconcile resolves the NodeClass, patches its status when that changed,
// reports Ready transitions, and asks to run again after Options.Resync.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	nc := &v1alpha1.NodeClass{}
	if err := c.kube.Get(ctx, req.NamespacedName, nc); err != nil {
		if apierrors.IsNotFound(err) {
			forget(req.Name)
			c.forgetReview(req.Name)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !nc.DeletionTimestamp.IsZero() {
		forget(nc.Name)
		return reconcile.Result{}, nil
	}
	before := meta.FindStatusCondition(nc.Status.Conditions, v1alpha1.ConditionReady)
	before = before.DeepCopy()
	next := Merge(nc.Status, c.resolver.Status(ctx, nc), nc.Generation, c.clk.Now())
	if !equality.Semantic.DeepEqual(nc.Status, next) {
		patch := client.MergeFrom(nc.DeepCopy())
		nc.Status = next
		if err := c.kube.Status().Patch(ctx, nc, patch); err != nil {
			if apierrors.IsConflict(err) {
				return reconcile.Result{RequeueAfter: conflictRequeue}, nil
			}
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
	}
	after := meta.FindStatusCondition(nc.Status.Conditions, v1alpha1.ConditionReady)
	observe(nc.Name, after)
	if before == nil || before.Status != after.Status {
		c.log.Info("nodeclass readiness changed", "nodeclass", nc.Name, "ready", after.Status, "reason", after.Reason)
		stowevents.Publish(c.recorder, readinessEvent(nc, after))
	}
	c.reviewUserData(nc)
	return reconcile.Result{RequeueAfter: c.opts.Resync}, nil
}

// reviewUserData tells, once per generation, which of the NodeClass's
// userData settings give way to the cloud's own.
func (c *Controller) reviewUserData(nc *v1alpha1.NodeClass) {
	reviewer, ok := c.resolver.(UserDataReviewer)
	if !ok {
		return
	}
	c.mu.Lock()
	done := c.reviewed[nc.Name] == nc.Generation
	c.reviewed[nc.Name] = nc.Generation
	c.mu.Unlock()
	if done {
		return
	}
	if replaced, err := reviewer.ReplacedUserData(nc); err == nil && len(replaced) > 0 {
		c.log.Info("nodeclass userData settings replaced", "nodeclass", nc.Name, "settings", strings.Join(replaced, ","))
		stowevents.Publish(c.recorder, userDataReplacedEvent(nc, replaced))
	}
}

func (c *Controller) forgetReview(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.reviewed, name)
}

// Merge returns the status to write: resolved's fields, and its conditions
// laid over current's so that a condition keeps its transition time while
// its status holds, and takes now when it changes. Every condition carries
// generation, and a reason the API server accepts ("Unknown" for one it
// would not); a resolved status without a Ready condition gets an Unknown one.
// Conditions resolved no longer reports are dropped.
func Merge(current, resolved v1alpha1.NodeClassStatus, generation int64, now time.Time) v1alpha1.NodeClassStatus {
	next := *resolved.DeepCopy()
	next.Conditions = nil
	incoming := resolved.Conditions
	if meta.FindStatusCondition(incoming, v1alpha1.ConditionReady) == nil {
		incoming = append(incoming, metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionUnknown,
			Reason: ReasonNotReported, Message: "The cloud provider reported no Ready condition"})
	}
	for _, in := range incoming {
		cond := in
		cond.ObservedGeneration = generation
		cond.Reason = nodeclaim.ConditionReason(cond.Reason)
		cond.LastTransitionTime = metav1.NewTime(now)
		if old := meta.FindStatusCondition(current.Conditions, cond.Type); old != nil && old.Status == cond.Status {
			cond.LastTransitionTime = old.LastTransitionTime
		}
		next.Conditions = append(next.Conditions, cond)
	}
	return next
}
