package provisioningrequest

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	provreqv1 "github.com/stowage-dev/stowage/controller/apis/autoscaling/v1"
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// work is what a reconcile read about one request.
type work struct {
	pr        *provreqv1.ProvisioningRequest
	owner     scheduler.BookingOwner
	want      []*corev1.Pod
	consumers Consumers
	// missing is a PodTemplate not found.
	missing error
	now     time.Time
	others  []scheduler.Booking
}

// step is what a reconcile does: the status to write, the room to book
// (none: the booking is given up), the claims to terminate, and when to
// look again.
type step struct {
	status    *provreqv1.ProvisioningRequestStatus
	booking   []*corev1.Pod
	terminate []string
	requeue   time.Duration
}

func (c *Controller) work(ctx context.Context, pr *provreqv1.ProvisioningRequest) (*work, error) {
	w := &work{pr: pr, owner: OwnerOf(pr), now: c.clk.Now(), others: c.cluster.Bookings()}
	want, err := Want(ctx, c.kube, pr)
	switch {
	case apierrors.IsNotFound(err):
		w.missing = err
		return w, nil
	case err != nil:
		return nil, err
	}
	pods := &corev1.PodList{}
	if err := c.kube.List(ctx, pods, client.InNamespace(pr.Namespace)); err != nil {
		return nil, fmt.Errorf("listing the pods of namespace %s: %w", pr.Namespace, err)
	}
	w.want, w.consumers = want, ConsumersOf(pr, pods.Items)
	return w, nil
}

// check is check-capacity: do the pod sets fit in the room registered
// nodes have? Then that room is booked, pinned to them.
func (c *Controller) check(w *work) step {
	pods := w.consumers.Unbound(w.owner, w.want)
	room := Solve(Registered(c.cluster.Snapshot(nil, nil)), w.others, scheduler.Booking{Owner: w.owner, Pods: pods}, c.opts.Solve)
	st := w.pr.Status.DeepCopy()
	set(w.pr, st, w.now, provreqv1.Accepted, true, ReasonAccepted, "")
	if !room.Fits() {
		set(w.pr, st, w.now, provreqv1.Provisioned, false, ReasonCapacityIsNotFound, room.Shortage(len(pods)))
		return step{status: st, requeue: 6 * Poll}
	}
	return c.provisioned(w, st, pods, room.Nodes, ReasonCapacityIsFound)
}

// provisioned books pods pinned to nodes and writes Provisioned=True.
func (c *Controller) provisioned(w *work, st *provreqv1.ProvisioningRequestStatus, pods []*corev1.Pod, nodes []string, reason string) step {
	Pin(pods, nodes)
	set(w.pr, st, w.now, provreqv1.Provisioned, true, reason,
		fmt.Sprintf("room for %d pods on %d nodes, booked for %s", len(pods), len(nodes), c.opts.BookingTime))
	if st.ProvisioningClassDetails == nil {
		st.ProvisioningClassDetails = map[string]provreqv1.Detail{}
	}
	st.ProvisioningClassDetails[DetailNodes] = provreqv1.Detail(joinNodes(nodes))
	return step{status: st, booking: pods, requeue: Poll}
}

// scaleUp is best-effort-atomic-scale-up: the pod sets are solved together
// against the nodes and the pools' instance types; their booking, free to
// open claims, has the provisioner launch them; once every pod fits on
// registered nodes the request is Provisioned. When some pod can no longer
// be placed anywhere (a launch found no capacity, and its offerings are
// marked unavailable), the request is Failed and the claims launched for it
// are terminated: all of its capacity or none.
func (c *Controller) scaleUp(ctx context.Context, w *work) step {
	st := w.pr.Status.DeepCopy()
	pods := w.consumers.Unbound(w.owner, w.want)
	full := c.cluster.Snapshot(nil, c.instanceTypes(ctx))
	b := scheduler.Booking{Owner: w.owner, Pods: pods}
	if room := Solve(Registered(full), w.others, b, c.opts.Solve); room.Fits() {
		return c.provisioned(w, st, pods, room.Nodes, ReasonCapacityIsProvisioned)
	}
	all := Solve(full, w.others, b, c.opts.Solve)
	if until := validUntil(w.pr); !until.IsZero() && w.now.After(until) {
		set(w.pr, st, w.now, provreqv1.Failed, true, ReasonValidUntilExpired,
			fmt.Sprintf("not provisioned within ValidUntilSeconds (%s)", w.pr.Spec.Parameters[provreqv1.ValidUntilSecondsParameter]))
		return step{status: st, terminate: launchedFor(full, all.Nodes, w.pr)}
	}
	if all.Short > 0 {
		set(w.pr, st, w.now, provreqv1.Failed, true, ReasonCapacityShortage, all.Shortage(len(pods)))
		return step{status: st, terminate: launchedFor(full, all.Nodes, w.pr)}
	}
	set(w.pr, st, w.now, provreqv1.Accepted, true, ReasonAccepted, "")
	set(w.pr, st, w.now, provreqv1.Provisioned, false, ReasonProvisioning,
		fmt.Sprintf("%d pods: %d on new capacity to launch, the rest on nodes and claims in flight", len(pods), all.New))
	return step{status: st, booking: pods, requeue: Poll}
}

// keep holds a Provisioned request's room for the pods that have not come
// yet, on the nodes that hold it, until the booking time ends
// (BookingExpired); capacity that goes (a node interrupted or deleted, its
// room taken) while the request's pods need it is CapacityRevoked.
func (c *Controller) keep(w *work) step {
	at, _ := ProvisionedAt(w.pr)
	st := w.pr.Status.DeepCopy()
	snap := Registered(c.cluster.Snapshot(nil, nil))
	cons := w.consumers.boundIn(snap)
	pods := cons.Unbound(w.owner, w.want)
	held := splitNodes(string(w.pr.Status.ProvisioningClassDetails[DetailNodes]))
	running := cons.running()
	if gone := goneNodes(snap, held); (running || len(pods) > 0) && len(gone) > 0 {
		set(w.pr, st, w.now, provreqv1.CapacityRevoked, true, ReasonCapacityRevoked, fmt.Sprintf("nodes %v that held its room are gone or being deleted", gone))
		return step{status: st}
	}
	if len(pods) == 0 && running {
		return step{status: st, requeue: 6 * Poll} // every pod came: watch the nodes while they run
	}
	if len(pods) == 0 {
		return step{status: st} // every pod came and finished
	}
	end := at.Add(c.opts.BookingTime)
	if !w.now.Before(end) {
		set(w.pr, st, w.now, provreqv1.BookingExpired, true, ReasonBookingExpired,
			fmt.Sprintf("%d pods did not come within the booking time (%s): the room is no longer kept", len(pods), c.opts.BookingTime))
		return step{status: st}
	}
	Pin(pods, held)
	if room := Solve(snap, w.others, scheduler.Booking{Owner: w.owner, Pods: pods}, c.opts.Solve); room.Short > 0 {
		set(w.pr, st, w.now, provreqv1.CapacityRevoked, true, ReasonCapacityRevoked, "the booked room was lost: "+room.Shortage(len(pods)))
		return step{status: st}
	}
	return step{status: st, booking: pods, requeue: min(Poll, end.Sub(w.now))}
}

// goneNodes are the held nodes no longer registered, or being deleted.
func goneNodes(snap *scheduler.Snapshot, held []string) []string {
	var gone []string
	for _, name := range held {
		if !slices.ContainsFunc(snap.Nodes, func(n *scheduler.StateNode) bool { return n.Name() == name }) {
			gone = append(gone, name)
		}
	}
	return gone
}

// launchedFor are the claims of nodes that hold the request's pods, created
// since the request and running no pod of their own: what it launched. A
// request that never had its room booked (not yet Provisioning) launched
// nothing.
func launchedFor(snap *scheduler.Snapshot, nodes []string, pr *provreqv1.ProvisioningRequest) []string {
	if c := apimeta.FindStatusCondition(pr.Status.Conditions, provreqv1.Provisioned); c == nil || c.Reason != ReasonProvisioning {
		return nil
	}
	var out []string
	for _, sn := range snap.Nodes {
		if sn.NodeClaim == nil || !slices.Contains(nodes, sn.Name()) || sn.NodeClaim.CreationTimestamp.Before(&pr.CreationTimestamp) {
			continue
		}
		if !slices.ContainsFunc(sn.Pods, ownPod) {
			out = append(out, sn.NodeClaim.Name)
		}
	}
	return out
}

// ownPod: a real pod that is not a DaemonSet's.
func ownPod(pod *corev1.Pod) bool {
	owner := metav1.GetControllerOf(pod)
	return !scheduler.IsVirtual(pod) && (owner == nil || owner.Kind != "DaemonSet")
}

// instanceTypes asks the cloud for each pool's types, as the provisioner
// does; a pool whose types cannot be listed has none.
func (c *Controller) instanceTypes(ctx context.Context) map[string][]*cloudprovider.InstanceType {
	out := map[string][]*cloudprovider.InstanceType{}
	for _, pool := range c.cluster.NodePools() {
		types, err := c.cloud.InstanceTypes(ctx, pool)
		if err != nil {
			c.log.Error("listing instance types", "nodepool", pool.Name, "error", err)
			continue
		}
		out[pool.Name] = types
	}
	return out
}

// apply books or gives up the room, terminates claims and writes the status.
func (c *Controller) apply(ctx context.Context, w *work, s step) (reconcile.Result, error) {
	if s.booking == nil {
		c.unbook(w.owner)
	} else {
		c.book(scheduler.Booking{Owner: w.owner, Pods: s.booking})
	}
	for _, name := range s.terminate {
		nc := &v1alpha1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if err := c.kube.Delete(ctx, nc); client.IgnoreNotFound(err) != nil {
			return reconcile.Result{}, fmt.Errorf("terminating nodeclaim %s launched for ProvisioningRequest %s/%s: %w", name, w.pr.Namespace, w.pr.Name, err)
		}
		c.log.Info("terminated capacity launched for a request that cannot have all of it", "provisioningrequest", w.pr.Namespace+"/"+w.pr.Name, "nodeclaim", name)
	}
	if s.status != nil {
		if err := c.write(ctx, w.pr, s.status); err != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{RequeueAfter: s.requeue}, nil
}

// book records the request's room; the provisioner is woken when it changed.
func (c *Controller) book(b scheduler.Booking) {
	for _, old := range c.cluster.Bookings() {
		if old.Owner == b.Owner && equality.Semantic.DeepEqual(old.Pods, b.Pods) {
			return
		}
	}
	c.cluster.SetBooking(b)
	c.opts.Trigger()
}

func (c *Controller) unbook(owner scheduler.BookingOwner) {
	for _, old := range c.cluster.Bookings() {
		if old.Owner == owner {
			c.cluster.RemoveBooking(owner)
			c.opts.Trigger()
			return
		}
	}
}

// write updates the request's status when it changed.
func (c *Controller) write(ctx context.Context, pr *provreqv1.ProvisioningRequest, st *provreqv1.ProvisioningRequestStatus) error {
	if equality.Semantic.DeepEqual(*st, pr.Status) {
		return nil
	}
	next := pr.DeepCopy()
	next.Status = *st
	if err := c.kube.Status().Update(ctx, next); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("writing the status of ProvisioningRequest %s/%s: %w", pr.Namespace, pr.Name, err)
	}
	for _, typ := range []string{provreqv1.Provisioned, provreqv1.Failed, provreqv1.BookingExpired, provreqv1.CapacityRevoked} {
		if cond := apimeta.FindStatusCondition(st.Conditions, typ); cond != nil && cond.Status == metav1.ConditionTrue &&
			!apimeta.IsStatusConditionTrue(pr.Status.Conditions, typ) {
			Outcomes.WithLabelValues(pr.Spec.ProvisioningClassName, typ, cond.Reason).Inc()
			c.log.Info("request "+typ, "provisioningrequest", pr.Namespace+"/"+pr.Name, "reason", cond.Reason, "message", cond.Message)
		}
	}
	return nil
}
