// Package lifecycle drives a NodeClaim from creation to Ready. It launches the
// claim's instance through the CloudProvider (Launched), pairs the claim with
// the Node that registers with its provider id and applies the pool's labels
// and taints to that Node (Registered), waits until the Node is usable
// (Initialized), and deletes a claim whose launch or registration takes too
// long. Terminating the instance is the termination controller's job, behind
// the finalizer this controller adds before the first launch.
package lifecycle

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
)

// Name names the controller in logs, metrics and events.
const Name = "nodeclaim-lifecycle"

// Defaults for Options fields left zero.
const (
	DefaultLaunchTimeout       = 5 * time.Minute
	DefaultRegistrationTimeout = 15 * time.Minute
	DefaultRetryBaseDelay      = 5 * time.Second
	DefaultRetryMaxDelay       = time.Minute
	DefaultWorkers             = 10
)

// conflictRequeue is how soon a claim is retried after a write lost a race;
// the newer version's watch event usually arrives first.
const conflictRequeue = 250 * time.Millisecond

// Options tunes the controller; the zero value uses the defaults above.
type Options struct {
	// LaunchTimeout is how long a claim may stay un-Launched before it is deleted.
	LaunchTimeout time.Duration
	// RegistrationTimeout is how long after launching the Node may take to register.
	RegistrationTimeout time.Duration
	// RetryBaseDelay and RetryMaxDelay bound the per-claim exponential backoff
	// between launches that failed for lack of capacity, an unready NodeClass or
	// a CreateError.
	RetryBaseDelay, RetryMaxDelay time.Duration
	// DaemonSetTimeout is how long after its Node became Ready a claim waits
	// for the pods of the Node's DaemonSets to be bound before it uncordons
	// the Node anyway (see daemonsets.go).
	DaemonSetTimeout time.Duration
	// Workers is how many claims are reconciled at once.
	Workers int
	// Logger receives the controller's logs; nothing is logged when nil.
	Logger hclog.Logger
	// Recorder publishes events; Register uses the manager's when nil.
	Recorder events.EventRecorder
}

func (o Options) withDefaults() Options {
	o.LaunchTimeout = orDefault(o.LaunchTimeout, DefaultLaunchTimeout)
	o.RegistrationTimeout = orDefault(o.RegistrationTimeout, DefaultRegistrationTimeout)
	o.RetryBaseDelay = orDefault(o.RetryBaseDelay, DefaultRetryBaseDelay)
	o.RetryMaxDelay = orDefault(o.RetryMaxDelay, DefaultRetryMaxDelay)
	o.DaemonSetTimeout = orDefault(o.DaemonSetTimeout, DefaultDaemonSetTimeout)
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	return o
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Controller reconciles NodeClaims through launch, registration and initialization.
type Controller struct {
	clk      clock.Clock
	kube     client.Client
	cloud    cloudprovider.CloudProvider
	opts     Options
	log      hclog.Logger
	recorder events.EventRecorder
	backoff  workqueue.TypedRateLimiter[string] // claim name -> launch retry backoff
	alarms   *nodeclaim.Alarms
}

// New returns a controller reading and writing through kube (a manager's
// client, with the indexes Register adds) and launching through cloud.
func New(clk clock.Clock, kube client.Client, cloud cloudprovider.CloudProvider, opts Options) *Controller {
	opts = opts.withDefaults()
	return &Controller{
		clk: clk, kube: kube, cloud: cloud, opts: opts,
		log:      opts.Logger.Named(Name),
		recorder: opts.Recorder,
		backoff:  workqueue.NewTypedItemExponentialFailureRateLimiter[string](opts.RetryBaseDelay, opts.RetryMaxDelay),
		alarms:   nodeclaim.NewAlarms(clk),
	}
}

// +kubebuilder:rbac:groups=stowage.dev,resources=nodeclaims,verbs=get;list;watch;patch;delete
// +kubebuilder:rbac:groups=stowage.dev,resources=nodeclaims/status,verbs=patch
// +kubebuilder:rbac:groups=stowage.dev,resources=nodepools,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,resources=daemonsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Register adds the controller to mgr: it watches NodeClaims, the Nodes that
// register for them (by provider id), the DaemonSet pods bound to those
// Nodes, and its own timeout alarms.
func (c *Controller) Register(mgr manager.Manager) error {
	if err := nodeclaim.IndexFields(context.Background(), mgr.GetFieldIndexer(), true); err != nil {
		return err
	}
	if c.recorder == nil {
		c.recorder = mgr.GetEventRecorder(Name)
	}
	return builder.ControllerManagedBy(mgr).
		Named(Name).
		// Status-only updates are this controller's own writes; reacting to them
		// would retry a failed launch at once instead of after its backoff. The
		// one that records the provider id is the exception (see register).
		For(&v1alpha1.NodeClaim{}, builder.WithPredicates(predicate.Or[client.Object](
			predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{},
			providerIDChanged()))).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(c.claimForNode)).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(c.claimForDaemonPod)).
		WatchesRawSource(c.alarms).
		WithOptions(controller.Options{MaxConcurrentReconciles: c.opts.Workers}).
		Complete(c)
}

// outcome is what a step asks of Reconcile: skip the later steps, and/or
// come back after a delay.
type outcome struct {
	stop         bool
	requeueAfter time.Duration
}

type step func(context.Context, *v1alpha1.NodeClaim) (outcome, error)

// Reconcile moves one claim as far through Launched, Registered, Initialized
// and Ready as its instance and Node allow. A claim being deleted is left to
// the termination controller. Liveness runs first so that a claim past its
// deadline costs no further launch attempt.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	claim := &v1alpha1.NodeClaim{}
	if err := c.kube.Get(ctx, req.NamespacedName, claim); err != nil {
		if apierrors.IsNotFound(err) {
			c.backoff.Forget(req.Name)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !claim.DeletionTimestamp.IsZero() {
		c.backoff.Forget(req.Name)
		return reconcile.Result{}, nil
	}
	var result reconcile.Result
	for _, s := range []step{c.prepare, c.liveness, c.launch, c.register, c.initialize} {
		out, err := s(ctx, claim)
		if apierrors.IsConflict(err) {
			return reconcile.Result{RequeueAfter: conflictRequeue}, nil
		}
		if err != nil {
			return reconcile.Result{}, err
		}
		if out.requeueAfter > 0 && (result.RequeueAfter == 0 || out.requeueAfter < result.RequeueAfter) {
			result.RequeueAfter = out.requeueAfter
		}
		if out.stop {
			break
		}
	}
	return result, nil
}

// prepare adds the termination finalizer before anything can be launched, and
// starts every condition as Unknown: the Launched condition's transition time
// is when the launch timeout starts.
func (c *Controller) prepare(ctx context.Context, claim *v1alpha1.NodeClaim) (outcome, error) {
	if !controllerutil.ContainsFinalizer(claim, v1alpha1.TerminationFinalizer) {
		stored := claim.DeepCopy()
		controllerutil.AddFinalizer(claim, v1alpha1.TerminationFinalizer)
		if err := c.kube.Patch(ctx, claim, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
			return outcome{}, fmt.Errorf("adding the termination finalizer to nodeclaim %s: %w", claim.Name, err)
		}
	}
	if nodeclaim.Condition(claim, v1alpha1.ConditionLaunched) != nil {
		return outcome{}, nil
	}
	return outcome{}, c.patchStatus(ctx, claim, func(now time.Time) {
		for _, t := range []string{v1alpha1.ConditionLaunched, v1alpha1.ConditionRegistered, v1alpha1.ConditionInitialized} {
			nodeclaim.SetCondition(claim, t, metav1.ConditionUnknown, ReasonAwaitingReconciliation, "", now)
		}
	})
}

// patchStatus applies mutate, refreshes Ready, and writes the status if it
// changed. The write fails with a conflict if the claim changed since it was
// read, so that no other writer's conditions are overwritten.
func (c *Controller) patchStatus(ctx context.Context, claim *v1alpha1.NodeClaim, mutate func(now time.Time)) error {
	stored := claim.DeepCopy()
	now := c.clk.Now()
	mutate(now)
	setReady(claim, now)
	if equality.Semantic.DeepEqual(stored.Status, claim.Status) {
		return nil
	}
	if err := c.kube.Status().Patch(ctx, claim, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("patching the status of nodeclaim %s: %w", claim.Name, err)
	}
	return nil
}

// setReady makes Ready True once Launched, Registered and Initialized all are,
// and otherwise Unknown, naming the first that is not.
func setReady(claim *v1alpha1.NodeClaim, now time.Time) {
	for _, t := range []string{v1alpha1.ConditionLaunched, v1alpha1.ConditionRegistered, v1alpha1.ConditionInitialized} {
		if !nodeclaim.IsTrue(claim, t) {
			nodeclaim.SetCondition(claim, v1alpha1.ConditionReady, metav1.ConditionUnknown, "Not"+t, t+" is not True", now)
			return
		}
	}
	nodeclaim.SetCondition(claim, v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ConditionReady, "", now)
}

func (c *Controller) claimForNode(ctx context.Context, o client.Object) []reconcile.Request {
	node, ok := o.(*corev1.Node)
	if !ok {
		return nil
	}
	claim, err := nodeclaim.ClaimForNode(ctx, c.kube, node)
	if err != nil {
		c.log.Debug("mapping a node to its nodeclaim", "node", node.Name, "error", err)
		return nil
	}
	if claim == nil {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(claim)}}
}

// poolName is the claim's nodepool label, the value of every nodepool metric label.
func poolName(claim *v1alpha1.NodeClaim) string { return claim.Labels[v1alpha1.LabelNodePool] }
