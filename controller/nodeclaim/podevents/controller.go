// Package podevents records on each NodeClaim when a pod last bound to its
// node or left it (status.lastPodEventTime), as Karpenter's pod events
// controller does. Consolidation waits consolidateAfter from that time; the
// cluster state keeps it in memory too, but memory goes with the leader, and
// a new leader would see a node emptied a moment before as quiet since its
// initialization.
//
// Writes are deduplicated: a claim whose time is less than DedupeWindow old
// is not written again, except when its node has just become empty, which is
// always written, since that is the event an emptiness wait counts from.
package podevents

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stowage-dev/stowage/controller/nodeclaim"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// Name names the controller in logs and metrics.
const Name = "nodeclaim-podevents"

// DedupeWindow is how long a claim's lastPodEventTime stands before a new
// pod event is written over it (Karpenter's figure), unless the node has
// just become empty.
const DedupeWindow = 10 * time.Second

// Options tunes the controller; the zero value logs nothing.
type Options struct {
	Logger hclog.Logger
}

// Controller writes the lastPodEventTime of the claims whose nodes' pods
// come and go. Its reconciles are keyed by Node name.
type Controller struct {
	clk  clock.Clock
	kube client.Client
	log  hclog.Logger
}

// New returns a controller reading Nodes, NodeClaims and Pods (by the
// nodeclaim package's indexes) and writing claims' status through kube.
func New(clk clock.Clock, kube client.Client, opts Options) *Controller {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	return &Controller{clk: clk, kube: kube, log: opts.Logger.Named(Name)}
}

// +kubebuilder:rbac:groups="",resources=pods;nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups=stowage.dev,resources=nodeclaims,verbs=get;list;watch
// +kubebuilder:rbac:groups=stowage.dev,resources=nodeclaims/status,verbs=patch

// Register adds the controller to mgr: every pod event (Event) reconciles
// the pod's node.
func (c *Controller) Register(mgr manager.Manager) error {
	if err := nodeclaim.IndexFields(context.Background(), mgr.GetFieldIndexer(), true); err != nil {
		return err
	}
	toNode := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		pod, ok := o.(*corev1.Pod)
		if !ok || pod.Spec.NodeName == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: pod.Spec.NodeName}}}
	})
	return builder.ControllerManagedBy(mgr).Named(Name).
		Watches(&corev1.Pod{}, toNode, builder.WithPredicates(predicate.Funcs{
			CreateFunc:  func(e event.CreateEvent) bool { return Event(nil, asPod(e.Object)) },
			UpdateFunc:  func(e event.UpdateEvent) bool { return Event(asPod(e.ObjectOld), asPod(e.ObjectNew)) },
			DeleteFunc:  func(e event.DeleteEvent) bool { return Event(asPod(e.Object), nil) },
			GenericFunc: func(event.GenericEvent) bool { return false },
		})).
		Complete(c)
}

func asPod(o client.Object) *corev1.Pod {
	pod, _ := o.(*corev1.Pod)
	return pod
}

// Event reports whether a pod's change from old to updated (nil for none) is
// a pod event of its node: a pod that would need a home (not a DaemonSet's
// or a mirror pod) bound to it, or leaving it: finished, being deleted, or
// gone.
func Event(old, updated *corev1.Pod) bool {
	return holds(old) != holds(updated) || holds(old) && old.Spec.NodeName != updated.Spec.NodeName
}

// holds reports whether the pod occupies a node as a pod event counts it.
func holds(p *corev1.Pod) bool {
	return p != nil && p.Spec.NodeName != "" && scheduling.Reschedulable(p)
}

// Reconcile writes now as the lastPodEventTime of the node's claim, unless
// the time it has is less than DedupeWindow old and the node still holds a
// pod.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	node := &corev1.Node{}
	if err := c.kube.Get(ctx, req.NamespacedName, node); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	claim, err := nodeclaim.ClaimForNode(ctx, c.kube, node)
	if err != nil || claim == nil {
		return reconcile.Result{}, err
	}
	empty, err := c.empty(ctx, node.Name)
	if err != nil {
		return reconcile.Result{}, err
	}
	now, last := c.clk.Now(), claim.Status.LastPodEventTime.Time
	if !empty && !last.IsZero() && now.Sub(last) < DedupeWindow {
		return reconcile.Result{}, nil
	}
	stored := claim.DeepCopy()
	claim.Status.LastPodEventTime = metav1.NewTime(now)
	if err := c.kube.Status().Patch(ctx, claim, client.MergeFrom(stored)); client.IgnoreNotFound(err) != nil {
		return reconcile.Result{}, fmt.Errorf("writing the last pod event time of nodeclaim %s: %w", claim.Name, err)
	}
	Written.WithLabelValues(emptyLabel(empty)).Inc()
	c.log.Debug("pod event recorded", "nodeclaim", claim.Name, "node", node.Name, "empty", empty)
	return reconcile.Result{}, nil
}

// empty reports whether no pod on the node would need a home.
func (c *Controller) empty(ctx context.Context, node string) (bool, error) {
	list := &corev1.PodList{}
	if err := c.kube.List(ctx, list, client.MatchingFields{nodeclaim.PodNodeNameField: node}, client.UnsafeDisableDeepCopy); err != nil {
		return false, fmt.Errorf("listing the pods of node %s: %w", node, err)
	}
	for i := range list.Items {
		if holds(&list.Items[i]) {
			return false, nil
		}
	}
	return true, nil
}
