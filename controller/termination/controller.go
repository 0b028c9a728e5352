// Package termination finishes NodeClaims and Nodes that are being deleted.
// Both carry the stowage.dev/termination finalizer; while it is there this
// package taints the Node stowage.dev/disrupted:NoSchedule, waits (with
// Options.Homes) until the Node's pods have a Ready home elsewhere, drains it
// through the Eviction API (so PodDisruptionBudgets hold), terminates the
// instance until the cloud says it is gone, deletes the Node, and only then
// lets both objects go. The wait ends at the drain-by time at the latest: the
// deletion plus ReplacementWait, the interruption deadline marked on the Node
// or its claim less a 10 s margin, or the end of the claim's
// terminationGracePeriod, each less the pods' longest termination grace
// period. At the interruption's drain-by time the pods a PDB or do-not-disrupt
// holds are deleted: the instance goes at its deadline regardless.
//
// Pods annotated do-not-disrupt, and pods a PDB protects, are waited for
// until the claim's terminationGracePeriod (counted from its deletion) runs
// out; then they are deleted. DaemonSet pods, mirror pods and pods that
// tolerate the disrupted taint are never evicted.
package termination

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	stowevents "github.com/stowage-dev/stowage/controller/events"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
)

// Names of the two controllers Register adds, in logs, metrics and events.
const (
	Name               = "nodeclaim-termination"
	NodeControllerName = "node-termination"
)

// Defaults for Options fields left zero.
const (
	DefaultDrainPollInterval    = time.Second
	DefaultInstancePollInterval = 5 * time.Second
	// Karpenter's eviction queue backs off from 100 ms to 10 s: a drain a
	// PDB paces evicts its next pod within seconds of the budget allowing it.
	DefaultEvictionRetryBase = 100 * time.Millisecond
	DefaultEvictionRetryMax  = 10 * time.Second
	DefaultWorkers           = 10
)

// conflictRequeue is how soon a write that lost a race is retried.
const conflictRequeue = 250 * time.Millisecond

// Options tunes the controllers; the zero value uses the defaults above.
type Options struct {
	// DrainPollInterval is how often a draining Node's pods are looked at again.
	DrainPollInterval time.Duration
	// InstancePollInterval is how often Delete is called again while the instance shuts down.
	InstancePollInterval time.Duration
	// EvictionRetryBase and EvictionRetryMax bound the per-node exponential
	// backoff after an eviction is refused (429) because of a PDB.
	EvictionRetryBase, EvictionRetryMax time.Duration
	// Workers is how many claims (and, separately, Nodes) are terminated at once.
	Workers int
	// Homes, when set, holds each drain until its pods have a Ready home
	// elsewhere (replacement before eviction), or until its drain-by time.
	Homes Homes
	// ReplacementWait bounds that hold from the deletion;
	// DefaultReplacementWait when zero.
	ReplacementWait time.Duration
	// Logger receives the controllers' logs; nothing is logged when nil.
	Logger hclog.Logger
	// Recorder publishes events; Register uses the manager's when nil.
	Recorder events.EventRecorder
}

func (o Options) withDefaults() Options {
	o.DrainPollInterval = orDefault(o.DrainPollInterval, DefaultDrainPollInterval)
	o.InstancePollInterval = orDefault(o.InstancePollInterval, DefaultInstancePollInterval)
	o.EvictionRetryBase = orDefault(o.EvictionRetryBase, DefaultEvictionRetryBase)
	o.EvictionRetryMax = orDefault(o.EvictionRetryMax, DefaultEvictionRetryMax)
	o.ReplacementWait = orDefault(o.ReplacementWait, DefaultReplacementWait)
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

// Controller terminates deleted NodeClaims (Reconcile) and deleted Nodes
// (a second controller that Register adds).
type Controller struct {
	*terminator
	alarms *nodeclaim.Alarms
}

// New returns a controller reading and writing through kube (a manager's
// client, with the indexes Register adds) and terminating through cloud.
func New(clk clock.Clock, kube client.Client, cloud cloudprovider.CloudProvider, opts Options) *Controller {
	opts = opts.withDefaults()
	return &Controller{
		terminator: &terminator{
			clk: clk, kube: kube, cloud: cloud, opts: opts,
			log:      opts.Logger.Named("termination"),
			recorder: opts.Recorder,
			backoff:  workqueue.NewTypedItemExponentialFailureRateLimiter[string](opts.EvictionRetryBase, opts.EvictionRetryMax),
		},
		alarms: nodeclaim.NewAlarms(clk),
	}
}

// +kubebuilder:rbac:groups=stowage.dev,resources=nodeclaims,verbs=get;list;watch;patch;delete
// +kubebuilder:rbac:groups=stowage.dev,resources=nodeclaims/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups="",resources=pods/eviction,verbs=create
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Register adds both controllers to mgr: one for NodeClaims and one for
// Nodes, each reacting only to objects being deleted.
func (c *Controller) Register(mgr manager.Manager) error {
	if err := nodeclaim.IndexFields(context.Background(), mgr.GetFieldIndexer(), true); err != nil {
		return err
	}
	if c.recorder == nil {
		c.recorder = mgr.GetEventRecorder(Name)
	}
	deleting := builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
		return !o.GetDeletionTimestamp().IsZero()
	}))
	if err := builder.ControllerManagedBy(mgr).
		Named(Name).
		For(&v1alpha1.NodeClaim{}, deleting).
		Watches(&policyv1.PodDisruptionBudget{}, c.pdbHandler(false)).
		WatchesRawSource(c.alarms).
		WithOptions(controller.Options{MaxConcurrentReconciles: c.opts.Workers}).
		Complete(c); err != nil {
		return err
	}
	return builder.ControllerManagedBy(mgr).
		Named(NodeControllerName).
		For(&corev1.Node{}, deleting).
		Watches(&policyv1.PodDisruptionBudget{}, c.pdbHandler(true)).
		WithOptions(controller.Options{MaxConcurrentReconciles: c.opts.Workers}).
		Complete(&nodeReconciler{terminator: c.terminator})
}

// Reconcile terminates a NodeClaim being deleted: its Node is tainted and
// drained, its instance terminated, its Node deleted, and then its finalizer
// removed. The drain stops honouring do-not-disrupt pods and PDBs at the
// claim's deletion plus its terminationGracePeriod; an alarm on the injected
// clock wakes the claim then.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	claim := &v1alpha1.NodeClaim{}
	if err := c.kube.Get(ctx, req.NamespacedName, claim); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if claim.DeletionTimestamp.IsZero() || !controllerutil.ContainsFinalizer(claim, v1alpha1.TerminationFinalizer) {
		return reconcile.Result{}, nil
	}
	node, err := nodeclaim.NodeForClaim(ctx, c.kube, claim)
	if err != nil {
		return reconcile.Result{}, err
	}
	j := job{key: "nodeclaim/" + claim.Name, claim: claim, node: node, deadline: deadline(claim)}
	if j.deadline != nil && c.clk.Now().Before(*j.deadline) {
		c.alarms.Set(req, *j.deadline)
	}
	if wait, err := c.terminate(ctx, j); err != nil || wait > 0 {
		return asResult(wait, err)
	}
	if err := c.release(ctx, claim); err != nil {
		return asResult(0, err)
	}
	c.recordClaimTerminated(claim)
	return reconcile.Result{}, nil
}

// deadline is when the claim's drain stops waiting: its deletion plus its
// terminationGracePeriod, or nil (wait for ever) without one.
func deadline(claim *v1alpha1.NodeClaim) *time.Time {
	if claim.Spec.TerminationGracePeriod == nil || claim.DeletionTimestamp == nil {
		return nil
	}
	at := claim.DeletionTimestamp.Add(claim.Spec.TerminationGracePeriod.Duration)
	return &at
}

// release removes the termination finalizer from a claim or Node.
func (t *terminator) release(ctx context.Context, obj client.Object) error {
	stored, ok := obj.DeepCopyObject().(client.Object)
	if !ok || !controllerutil.RemoveFinalizer(obj, v1alpha1.TerminationFinalizer) {
		return nil
	}
	if err := t.kube.Patch(ctx, obj, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("removing the termination finalizer from %s: %w", obj.GetName(), err)
	}
	return nil
}

func (t *terminator) recordClaimTerminated(claim *v1alpha1.NodeClaim) {
	pool := claim.Labels[v1alpha1.LabelNodePool]
	Terminated.WithLabelValues(pool).Inc()
	Duration.WithLabelValues(pool).Observe(t.clk.Since(claim.DeletionTimestamp.Time).Seconds())
	t.log.Info("terminated nodeclaim", "nodeclaim", claim.Name, "nodepool", pool, "node", claim.Status.NodeName,
		"instance_id", nodeclaim.InstanceID(claim.Status.ProviderID))
	stowevents.Publish(t.recorder, terminatedEvent(claim))
}

// asResult turns a wait and an error into a reconcile result; a conflict is
// a short requeue rather than an error.
func asResult(wait time.Duration, err error) (reconcile.Result, error) {
	if apierrors.IsConflict(err) {
		return reconcile.Result{RequeueAfter: conflictRequeue}, nil
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: wait}, nil
}
