// Package interruption is the in-cluster half of the interruption path. The
// interruption Lambda (lambda/) receives AWS's EventBridge events (spot
// interruption warnings, rebalance recommendations, instance state changes,
// AWS Health scheduled changes, capacity reservation interruptions) through
// SQS and marks the affected Node with MarkNode; this controller acts on the
// mark so that the Node is replaced before the deadline.
//
// For every kind but a rebalance recommendation it deletes the Node's
// NodeClaim, once. The replacement comes before the eviction: the provisioner
// counts the pods of a node being deleted as pending and launches their new
// capacity at once, and the termination controller holds the drain until that
// capacity is Ready, or until the mark's deadline less the pods' termination
// grace and a margin, whichever comes first; it then drains the Node through
// the Eviction API and terminates the instance. An instance interrupted
// before its Node registered has its NodeClaim marked instead, and that claim
// is replaced in the same way (ClaimReconciler). A spot or capacity reservation
// interruption also tells the cloud that the offering is short. A rebalance
// recommendation only gets an event and a metric unless
// Options.ReplaceOnRebalance is set. A Node no NodeClaim owns is reported and
// left alone. docs/guides/interruption.md describes the contract with the
// Lambda.
package interruption

import (
	"context"
	"time"

	"github.com/hashicorp/go-hclog"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
)

// Name names the controller in logs, metrics and events.
const Name = "interruption"

// DefaultWorkers is Options.Workers when left zero: a spot market reclaiming
// capacity marks many Nodes at once.
const DefaultWorkers = 10

// conflictRequeue is how soon a write that lost a race is retried.
const conflictRequeue = 250 * time.Millisecond

// OfferingMarker is how the controller tells the cloud layer that a spot
// offering is short; controller/aws.CloudProvider implements it.
type OfferingMarker interface {
	// MarkOfferingUnavailable records that the offering (instance type, zone,
	// capacity type) cannot be relied on now, so that launches avoid it, and
	// returns for how long. It cannot fail; marking an offering again while it
	// is avoided does not lengthen the wait.
	MarkOfferingUnavailable(instanceType, zone, capacityType, reason string) time.Duration
}

// Options tunes the controller; the zero value replaces every kind of mark
// but rebalance recommendations, with DefaultWorkers.
type Options struct {
	// ReplaceOnRebalance replaces Nodes marked with a rebalance recommendation
	// too; by default they only get an event and a metric, as in Karpenter.
	ReplaceOnRebalance bool
	// Workers is how many Nodes are handled at once.
	Workers int
	// Logger receives the controller's logs; nothing is logged when nil.
	Logger hclog.Logger
	// Recorder publishes events; Register uses the manager's when nil.
	Recorder events.EventRecorder
}

// Controller acts on interruption marks.
type Controller struct {
	clk       clock.Clock
	kube      client.Client
	offerings OfferingMarker
	opts      Options
	log       hclog.Logger
	recorder  events.EventRecorder
	seen      seen
}

// New returns a controller reading and writing through kube (a manager's
// client, with the index Register adds, or any client whose List accepts the
// nodeclaim package's provider-id field selector) and reporting short spot
// offerings to offerings (nil reports none). clk times the deadline margins.
func New(clk clock.Clock, kube client.Client, offerings OfferingMarker, opts Options) *Controller {
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	return &Controller{clk: clk, kube: kube, offerings: offerings, opts: opts,
		log: opts.Logger.Named(Name), recorder: opts.Recorder, seen: seen{m: map[string]progress{}}}
}

// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups=stowage.dev,resources=nodeclaims,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=stowage.dev,resources=nodeclaims/status,verbs=patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Register adds the controller to mgr, watching the Nodes that carry (or
// carried) an interruption mark, and a second one (ClaimReconciler) watching
// the NodeClaims that do.
func (c *Controller) Register(mgr manager.Manager) error {
	if err := nodeclaim.IndexFields(context.Background(), mgr.GetFieldIndexer(), false); err != nil {
		return err
	}
	if c.recorder == nil {
		c.recorder = mgr.GetEventRecorder(Name)
	}
	if err := builder.ControllerManagedBy(mgr).
		Named(Name).
		For(&corev1.Node{}, builder.WithPredicates(Marked())).
		WithOptions(controller.Options{MaxConcurrentReconciles: c.opts.Workers}).
		Complete(c); err != nil {
		return err
	}
	return builder.ControllerManagedBy(mgr).
		Named(ClaimControllerName).
		For(&v1alpha1.NodeClaim{}, builder.WithPredicates(Marked())).
		WithOptions(controller.Options{MaxConcurrentReconciles: c.opts.Workers}).
		Complete(c.ClaimReconciler())
}

// Marked passes events for Nodes (or NodeClaims) carrying the interruption
// kind annotation, and updates that remove it (so that the controller
// forgets the object).
func Marked() predicate.Predicate {
	marked := func(o client.Object) bool { return o.GetAnnotations()[v1alpha1.AnnotationInterruptionKind] != "" }
	return predicate.Funcs{
		CreateFunc:  func(e event.CreateEvent) bool { return marked(e.Object) },
		UpdateFunc:  func(e event.UpdateEvent) bool { return marked(e.ObjectOld) || marked(e.ObjectNew) },
		DeleteFunc:  func(e event.DeleteEvent) bool { return marked(e.Object) },
		GenericFunc: func(e event.GenericEvent) bool { return marked(e.Object) },
	}
}

// Reconcile acts on the Node's interruption mark, once per mark: it reports
// the mark, marks the offering of a spot or capacity reservation
// interruption, and deletes the Node's NodeClaim unless the mark is a
// rebalance recommendation (and ReplaceOnRebalance is off) or the claim is
// already being deleted. Marks
// seen again (a resync, a redelivered event) are no-ops; a Node that is
// gone or unmarked is forgotten.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	node := &corev1.Node{}
	if err := c.kube.Get(ctx, req.NamespacedName, node); err != nil {
		if apierrors.IsNotFound(err) {
			c.seen.forget(req.Name)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	m, ok := Marks(node)
	if !ok {
		c.seen.forget(node.Name)
		return reconcile.Result{}, nil
	}
	p := c.seen.get(nodeTarget(node), m)
	if p.done {
		return reconcile.Result{}, nil
	}
	err := c.handle(ctx, node, m, &p)
	c.seen.put(node.Name, p)
	return asResult(err)
}

// asResult turns a conflict into a short requeue.
func asResult(err error) (reconcile.Result, error) {
	if apierrors.IsConflict(err) {
		return reconcile.Result{RequeueAfter: conflictRequeue}, nil
	}
	return reconcile.Result{}, err
}
