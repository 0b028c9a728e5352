// Package capacityblock moves nodes off a Capacity Block before EC2 takes
// them: EC2 terminates a block's instances 30 minutes before its end, so a
// node launched into a block is marked capacity-block-expiration its pool's
// capacityBlockLeadTime (60 minutes by default) before the end, due when EC2
// starts terminating. The mark is the interruption mark the Lambda writes on
// EC2's own warning (40 minutes before the end): the interruption
// controller deletes the claim once, the provisioner launches the pods'
// replacement on the pool's next option (the solver no longer offers the
// block within the lead time), and the termination controller drains the
// node once the replacement is Ready, or by the deadline. A claim whose node
// has not registered by then is deleted at once.
//
// The block's end is the one its NodeClass status lists (a block extended
// since the launch ends later), else the one the claim was launched with.
package capacityblock

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowevents "github.com/stowage-dev/stowage/controller/events"
	"github.com/stowage-dev/stowage/controller/interruption"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
)

// Name names the controller in logs, metrics and events.
const Name = "nodeclaim-capacity-block"

// TerminationLead is how long before a block's end EC2 starts terminating
// its instances: the mark's deadline.
const TerminationLead = 30 * time.Minute

// Options tunes the controller; the zero value logs nothing and, once
// registered, publishes through the manager's recorder.
type Options struct {
	Logger   hclog.Logger
	Recorder events.EventRecorder
}

// Controller marks the nodes of Capacity Blocks ahead of their end.
type Controller struct {
	clk      clock.Clock
	kube     client.Client
	log      hclog.Logger
	recorder events.EventRecorder
	alarms   *nodeclaim.Alarms
}

// New returns a controller reading claims, pools and classes and writing
// Nodes (and deleting claims) through kube.
func New(clk clock.Clock, kube client.Client, opts Options) *Controller {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	return &Controller{clk: clk, kube: kube, log: opts.Logger.Named(Name), recorder: opts.Recorder, alarms: nodeclaim.NewAlarms(clk)}
}

// Alarms are the controller's alarms, for a caller that drives its
// reconciles itself (the simulator).
func (c *Controller) Alarms() *nodeclaim.Alarms { return c.alarms }

// +kubebuilder:rbac:groups=stowage.dev,resources=nodeclaims,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=stowage.dev,resources=nodepools;nodeclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Register adds the controller to mgr: it watches NodeClaims and its alarms.
func (c *Controller) Register(mgr manager.Manager) error {
	if c.recorder == nil {
		c.recorder = mgr.GetEventRecorder(Name)
	}
	if err := nodeclaim.IndexFields(context.Background(), mgr.GetFieldIndexer(), false); err != nil {
		return err
	}
	return builder.ControllerManagedBy(mgr).Named(Name).For(&v1alpha1.NodeClaim{}).WatchesRawSource(c.alarms).Complete(c)
}

// Reconcile marks the node of a claim in a Capacity Block once its pool's
// lead time before the block's end has come, and sets an alarm for then
// before.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	claim := &v1alpha1.NodeClaim{}
	if err := c.kube.Get(ctx, req.NamespacedName, claim); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if claim.Labels[v1alpha1.LabelCapacityReservationType] != v1alpha1.CapacityReservationTypeCapacityBlock || !claim.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	end, ok := c.blockEnd(ctx, claim)
	if !ok {
		return reconcile.Result{}, nil
	}
	pool, err := nodeclaim.PoolFor(ctx, c.kube, claim)
	if err != nil {
		return reconcile.Result{}, err
	}
	lead := v1alpha1.DefaultCapacityBlockLeadTime
	if pool != nil {
		lead = pool.BlockLeadTime()
	}
	if leaveAt := end.Add(-lead); c.clk.Now().Before(leaveAt) {
		c.alarms.Set(req, leaveAt)
		return reconcile.Result{}, nil
	}
	return reconcile.Result{}, c.leave(ctx, claim, end, lead)
}

// blockEnd is when the claim's block ends: its NodeClass status's word,
// else the end the claim was launched with.
func (c *Controller) blockEnd(ctx context.Context, claim *v1alpha1.NodeClaim) (time.Time, bool) {
	id := claim.Labels[v1alpha1.LabelCapacityReservationID]
	if ref := claim.Spec.NodeClassRef; ref != nil {
		nc := &v1alpha1.NodeClass{}
		if err := c.kube.Get(ctx, client.ObjectKey{Name: ref.Name}, nc); err == nil {
			for _, r := range nc.Status.CapacityReservations {
				if r.ID == id && r.EndTime != nil {
					return r.EndTime.UTC(), true
				}
			}
		}
	}
	t, err := time.Parse(time.RFC3339, claim.Annotations[v1alpha1.AnnotationCapacityReservationEnd])
	return t.UTC(), err == nil
}

// leave marks the claim's node, or deletes a claim with no node yet.
func (c *Controller) leave(ctx context.Context, claim *v1alpha1.NodeClaim, end time.Time, lead time.Duration) error {
	block, pool := claim.Labels[v1alpha1.LabelCapacityReservationID], claim.Labels[v1alpha1.LabelNodePool]
	node, err := nodeclaim.NodeForClaim(ctx, c.kube, claim)
	if err != nil {
		return err
	}
	if node == nil || !launched(claim) {
		if err := c.kube.Delete(ctx, claim, client.Preconditions{UID: &claim.UID}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting nodeclaim %s of an ending capacity block: %w", claim.Name, err)
		}
	} else if err := c.mark(ctx, node, block, end); err != nil {
		return err
	}
	Left.WithLabelValues(pool).Inc()
	c.log.Info("moving a node off its ending capacity block", "nodeclaim", claim.Name, "nodepool", pool, "node", claim.Status.NodeName,
		"capacity_reservation", block, "end", end.Format(time.RFC3339), "lead_time", lead.String())
	stowevents.Publish(c.recorder, leavingEvent(claim, block, end, lead))
	return nil
}

// mark writes the capacity-block-expiration mark on the node, once per
// block end (redelivered, it changes nothing).
func (c *Controller) mark(ctx context.Context, node *corev1.Node, block string, end time.Time) error {
	m := interruption.Mark{Kind: v1alpha1.InterruptionKindCapacityBlockExpiration, Deadline: end.Add(-TerminationLead),
		EventID: "stowage-" + block + "-" + end.Format("20060102T150405Z")}
	if !interruption.MarkNode(node, m) {
		return nil
	}
	if err := c.kube.Update(ctx, node); err != nil {
		return fmt.Errorf("marking node %s of an ending capacity block: %w", node.Name, err)
	}
	return nil
}

func launched(claim *v1alpha1.NodeClaim) bool {
	return meta.IsStatusConditionTrue(claim.Status.Conditions, v1alpha1.ConditionLaunched)
}
