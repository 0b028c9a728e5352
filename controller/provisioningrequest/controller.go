// Package provisioningrequest serves ProvisioningRequests
// (autoscaling.x-k8s.io/v1) of two classes, as Cluster Autoscaler does:
// check-capacity (do the pod sets fit in the room that exists? then book
// it) and best-effort-atomic-scale-up (launch the capacity of every pod set
// or none). Room is booked in the cluster state as the provisioner's
// bookings (scheduler.Booking): while the atomic class's capacity is
// launched its virtual pods are free to open claims; once Provisioned they
// are pinned to the nodes that hold them, so that the booking keeps that
// room and never launches more. Pods that consume a request
// (provreqv1.ConsumeAnnotation) are not provisioned for while it books
// room: they use that room.
package provisioningrequest

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	provreqv1 "github.com/stowage-dev/stowage/controller/apis/autoscaling/v1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/state"
)

// Name names the controller in logs and metrics.
const Name = "provisioningrequest"

// DefaultBookingTime is how long a Provisioned request's room is kept for
// its pods: Cluster Autoscaler's, 10 minutes (its BookingDuration, the time
// a Provisioned request's nodes are kept from scale-down for the pods to
// come; Kueue's admission check reads BookingExpired, set when it ends with
// the pods not there, as a failure to retry).
const DefaultBookingTime = 10 * time.Minute

// Poll is how often a request whose capacity is being launched, or whose
// room is booked, is looked at again whatever changed.
const Poll = 5 * time.Second

// Options tune the controller.
type Options struct {
	// Trigger opens a provisioning batch: a request's room changed.
	Trigger func()
	// Logger receives the controller's logs; nothing is logged when nil.
	Logger hclog.Logger
	// BookingTime is DefaultBookingTime when zero.
	BookingTime time.Duration
	// Solve are the solve options the provisioner's decisions use.
	Solve scheduler.Options
}

// Controller serves ProvisioningRequests: it solves their pod sets against
// the cluster state, books their room there, launches (through the
// provisioner) and terminates their capacity, and writes their conditions.
type Controller struct {
	clk     clock.Clock
	kube    client.Client
	cluster *state.Cluster
	cloud   cloudprovider.CloudProvider
	opts    Options
	log     hclog.Logger

	seen *state.BookingResults
	wake chan event.GenericEvent
}

// New returns a controller reading and writing requests through kube,
// booking their room in cluster and asking cloud for instance types.
func New(clk clock.Clock, kube client.Client, cluster *state.Cluster, cloud cloudprovider.CloudProvider, opts Options) *Controller {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Trigger == nil {
		opts.Trigger = func() {}
	}
	if opts.BookingTime == 0 {
		opts.BookingTime = DefaultBookingTime
	}
	return &Controller{clk: clk, kube: kube, cluster: cluster, cloud: cloud, opts: opts, log: opts.Logger.Named(Name),
		seen: state.NewBookingResults(Kind), wake: make(chan event.GenericEvent, 64)}
}

// Observe is (part of) the provisioner's booking observer: a request whose
// booking the provisioner placed differently is looked at again at once.
func (c *Controller) Observe(results []scheduler.BookingResult) {
	for _, o := range c.seen.Record(results) {
		select {
		case c.wake <- event.GenericEvent{Object: &provreqv1.ProvisioningRequest{ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: o.Name}}}:
		default: // the poll looks at it
		}
	}
}

// +kubebuilder:rbac:groups=autoscaling.x-k8s.io,resources=provisioningrequests,verbs=get;list;watch
// +kubebuilder:rbac:groups=autoscaling.x-k8s.io,resources=provisioningrequests/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=podtemplates;pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=stowage.dev,resources=nodeclaims,verbs=get;list;watch;delete

// Register adds the controller to mgr when the cluster serves
// ProvisioningRequests; without the CRD it logs that they are off and adds
// nothing, so that the manager's caches never wait on a kind the API server
// does not have.
func (c *Controller) Register(mgr manager.Manager) error {
	gk := schema.GroupKind{Group: provreqv1.Group, Kind: Kind}
	if _, err := mgr.GetRESTMapper().RESTMapping(gk, provreqv1.SchemeGroupVersion.Version); err != nil {
		if apimeta.IsNoMatchError(err) {
			c.log.Warn("the cluster serves no ProvisioningRequests (autoscaling.x-k8s.io/v1): they are off; install the CRD and restart", "reason", err.Error())
			return nil
		}
		return fmt.Errorf("looking up the ProvisioningRequest API: %w", err)
	}
	return builder.ControllerManagedBy(mgr).Named(Name).
		For(&provreqv1.ProvisioningRequest{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(consumed)).
		WatchesRawSource(source.Channel(c.wake, &handler.EnqueueRequestForObject{})).
		Complete(c)
}

// consumed maps a pod to the request it consumes.
func consumed(_ context.Context, obj client.Object) []reconcile.Request {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil
	}
	if name, ok := Consumes(pod); ok {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: pod.Namespace, Name: name}}}
	}
	return nil
}

// Reconcile works one request out: its room is booked, kept or given up,
// its capacity launched or terminated, and its conditions written.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pr := &provreqv1.ProvisioningRequest{}
	if err := c.kube.Get(ctx, req.NamespacedName, pr); err != nil {
		if apierrors.IsNotFound(err) {
			c.unbook(scheduler.BookingOwner{Kind: Kind, Namespace: req.Namespace, Name: req.Name})
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, fmt.Errorf("reading ProvisioningRequest %s: %w", req.NamespacedName, err)
	}
	if !Ours(pr) {
		return reconcile.Result{}, nil
	}
	if Done(pr) {
		c.unbook(OwnerOf(pr))
		return reconcile.Result{}, nil
	}
	w, err := c.work(ctx, pr)
	if err != nil {
		return reconcile.Result{}, err
	}
	if w.missing != nil {
		st := pr.Status.DeepCopy()
		set(pr, st, c.clk.Now(), provreqv1.Accepted, false, ReasonPodTemplateNotFound, w.missing.Error())
		return reconcile.Result{RequeueAfter: Poll}, c.write(ctx, pr, st)
	}
	var next step
	switch _, provisioned := ProvisionedAt(pr); {
	case provisioned:
		next = c.keep(w)
	case pr.Spec.ProvisioningClassName == provreqv1.CheckCapacityClass:
		next = c.check(w)
	default:
		next = c.scaleUp(ctx, w)
	}
	return c.apply(ctx, w, next)
}
