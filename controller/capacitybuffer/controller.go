package capacitybuffer

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
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

	autoscalingv1beta1 "github.com/stowage-dev/stowage/controller/apis/autoscaling/v1beta1"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/state"
)

// Name names the controller in logs and metrics.
const Name = "capacitybuffer"

// Revisit is how often a namespace's buffers are worked out again whatever
// changed (a workload's replicas, a quota's use).
const Revisit = 5 * time.Minute

// Options tune the controller.
type Options struct {
	// Trigger opens a provisioning batch: a buffer's room changed.
	Trigger func()
	// Logger receives the controller's logs; nothing is logged when nil.
	Logger hclog.Logger
	// DryRun books the buffers' room and writes no status (stowage run
	// --dry-run, beside an autoscaler that may own them).
	DryRun bool
}

// Controller books each CapacityBuffer's room in the cluster state and
// writes its status. It reconciles a namespace at a time (requests carry
// the namespace only): the namespace's quotas are shared by its buffers.
type Controller struct {
	clk     clock.Clock
	kube    client.Client
	cluster *state.Cluster
	opts    Options
	log     hclog.Logger

	// seen is the provisioner's last word on each buffer's room.
	seen *state.BookingResults
	wake chan event.GenericEvent
}

// New returns a controller reading and writing buffers through kube and
// booking their room in cluster.
func New(clk clock.Clock, kube client.Client, cluster *state.Cluster, opts Options) *Controller {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Trigger == nil {
		opts.Trigger = func() {}
	}
	return &Controller{clk: clk, kube: kube, cluster: cluster, opts: opts, log: opts.Logger.Named(Name),
		seen: state.NewBookingResults(Kind), wake: make(chan event.GenericEvent, 64)}
}

// Observe is the provisioner's booking observer: where its last decision
// put each booking's virtual pods. The buffers whose word changed are
// reconciled again, to write their Provisioning condition.
func (c *Controller) Observe(results []scheduler.BookingResult) {
	for _, o := range c.seen.Record(results) {
		select {
		case c.wake <- event.GenericEvent{Object: &autoscalingv1beta1.CapacityBuffer{ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: o.Name}}}:
		default: // the revisit writes it
		}
	}
}

// +kubebuilder:rbac:groups=autoscaling.x-k8s.io,resources=capacitybuffers,verbs=get;list;watch
// +kubebuilder:rbac:groups=autoscaling.x-k8s.io,resources=capacitybuffers/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=podtemplates;resourcequotas,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets;replicasets,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch

// Register adds the controller to mgr when the cluster serves CapacityBuffers;
// without the CRD it logs that buffers are off (until `stowage run` starts
// again) and adds nothing, so that the manager's caches never wait on a
// kind the API server does not have.
func (c *Controller) Register(mgr manager.Manager) error {
	gk := schema.GroupKind{Group: autoscalingv1beta1.Group, Kind: Kind}
	if _, err := mgr.GetRESTMapper().RESTMapping(gk, autoscalingv1beta1.SchemeGroupVersion.Version); err != nil {
		if apimeta.IsNoMatchError(err) {
			c.log.Warn("the cluster serves no CapacityBuffers (autoscaling.x-k8s.io/v1beta1): buffers are off; install the CRD and restart", "reason", err.Error())
			return nil
		}
		return fmt.Errorf("looking up the CapacityBuffer API: %w", err)
	}
	byNamespace := handler.EnqueueRequestsFromMapFunc(namespaceOf)
	return builder.ControllerManagedBy(mgr).Named(Name).
		For(&autoscalingv1beta1.CapacityBuffer{}).
		Watches(&corev1.PodTemplate{}, byNamespace).
		Watches(&corev1.ResourceQuota{}, byNamespace).
		Watches(&appsv1.Deployment{}, byNamespace).
		Watches(&appsv1.StatefulSet{}, byNamespace).
		Watches(&appsv1.ReplicaSet{}, byNamespace).
		Watches(&batchv1.Job{}, byNamespace).
		WatchesRawSource(source.Channel(c.wake, byNamespace)).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			return c.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: req.Namespace}})
		}))
}

// namespaceOf maps any object to its namespace's request.
func namespaceOf(_ context.Context, obj client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace()}}}
}

// Reconcile works out the buffers of req's namespace: it books their room,
// forgets the room of buffers gone, and writes the statuses that changed.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	list := &autoscalingv1beta1.CapacityBufferList{}
	if err := c.kube.List(ctx, list, client.InNamespace(req.Namespace)); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing the CapacityBuffers of namespace %s: %w", req.Namespace, err)
	}
	buffers := make([]*autoscalingv1beta1.CapacityBuffer, len(list.Items))
	for i := range list.Items {
		buffers[i] = &list.Items[i]
	}
	outcomes, err := Plan(ctx, ClientSource{Reader: c.kube}, buffers)
	if err != nil {
		return reconcile.Result{}, err
	}
	changed := c.forgetGone(req.Namespace, outcomes)
	var errs []error
	for _, o := range outcomes {
		if !o.Ours {
			changed = c.unbook(o.Booking.Owner) || changed
			continue
		}
		changed = c.book(o.Booking) || changed
		Chunks.WithLabelValues(o.Buffer.Namespace, o.Buffer.Name).Set(float64(o.Replicas))
		if err := c.writeStatus(ctx, o); err != nil {
			errs = append(errs, err)
		}
	}
	if changed {
		c.opts.Trigger()
	}
	if len(errs) > 0 {
		return reconcile.Result{}, fmt.Errorf("writing CapacityBuffer statuses: %v", errs)
	}
	return reconcile.Result{RequeueAfter: Revisit}, nil
}

// book records a buffer's room; it reports whether the room changed.
func (c *Controller) book(b scheduler.Booking) bool {
	for _, old := range c.cluster.Bookings() {
		if old.Owner == b.Owner && sameRoom(old.Pods, b.Pods) {
			return false
		}
	}
	c.cluster.SetBooking(b)
	c.log.Info("booked room", "capacitybuffer", b.Owner.Namespace+"/"+b.Owner.Name, "chunks", len(b.Pods))
	return true
}

func (c *Controller) unbook(owner scheduler.BookingOwner) bool {
	for _, old := range c.cluster.Bookings() {
		if old.Owner == owner {
			c.cluster.RemoveBooking(owner)
			return true
		}
	}
	return false
}

// forgetGone drops the room of the namespace's buffers that no longer exist.
func (c *Controller) forgetGone(namespace string, outcomes []Outcome) bool {
	present := map[scheduler.BookingOwner]bool{}
	for _, o := range outcomes {
		present[o.Booking.Owner] = true
	}
	changed := false
	for _, b := range c.cluster.Bookings() {
		if b.Owner.Kind == Kind && b.Owner.Namespace == namespace && !present[b.Owner] {
			c.cluster.RemoveBooking(b.Owner)
			Chunks.DeleteLabelValues(b.Owner.Namespace, b.Owner.Name)
			changed = true
		}
	}
	return changed
}

// sameRoom: as many chunks, of the same shape.
func sameRoom(a, b []*corev1.Pod) bool {
	if len(a) != len(b) || len(a) == 0 {
		return len(a) == len(b)
	}
	return equality.Semantic.DeepEqual(a[0].Spec, b[0].Spec) && equality.Semantic.DeepEqual(a[0].Labels, b[0].Labels) &&
		equality.Semantic.DeepEqual(a[0].Annotations, b[0].Annotations)
}

// writeStatus updates the buffer's status when it changed.
func (c *Controller) writeStatus(ctx context.Context, o Outcome) error {
	st := Status(o, c.seen.Last(o.Booking.Owner), metav1.NewTime(c.clk.Now()))
	if c.opts.DryRun || equality.Semantic.DeepEqual(st, o.Buffer.Status) {
		return nil
	}
	cb := o.Buffer.DeepCopy()
	cb.Status = st
	if err := c.kube.Status().Update(ctx, cb); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("%s/%s: %w", cb.Namespace, cb.Name, err)
	}
	return nil
}
