// Package repair replaces nodes that stay NotReady, as Karpenter's node
// repair does: a node whose Ready condition has been False or Unknown (its
// kubelet unreachable) for its pool's spec.disruption.repairAfter (30
// minutes by default, Karpenter's toleration) has its NodeClaim deleted; the
// provisioner launches capacity for its pods and the termination controller
// drains it (pods stuck terminating on an unreachable kubelet are not waited
// for) and terminates its instance. Budgets do not bound repair, which is
// involuntary; it stops in a pool while more than MaxUnhealthy of the pool's
// nodes are unhealthy, which says the cause is not the nodes (a lost zone, a
// broken image, the network) and replacing them would take a share of the
// fleet down at once.
package repair

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	corev1 "k8s.io/api/core/v1"
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
const Name = "node-repair"

// BlockedRecheck is how soon a repair that the pool's health held back is
// looked at again.
const BlockedRecheck = time.Minute

// Options tunes the controller; the zero value logs nothing and, once
// registered, publishes through the manager's recorder.
type Options struct {
	Logger   hclog.Logger
	Recorder events.EventRecorder
}

// Controller deletes the NodeClaim of each node unhealthy for longer than
// its pool allows. Its timers are alarms on the injected clock, so that a
// new leader honours them and a simulation reaches them.
type Controller struct {
	clk      clock.Clock
	kube     client.Client
	log      hclog.Logger
	recorder events.EventRecorder
	alarms   *nodeclaim.Alarms

	mu sync.Mutex
	// pool name -> its health as last counted; reused within one instant of
	// the clock, as a lost zone makes hundreds of nodes due at once
	health map[string]poolHealth
	// node name -> held back, so that its event is published once per spell
	held map[string]bool
}

// poolHealth is a pool's node count and unhealthy nodes at one instant.
type poolHealth struct {
	at               time.Time
	unhealthy, total int
}

// New returns a controller reading Nodes, NodeClaims and NodePools and
// deleting claims through kube (a manager's client, with the provider id
// indexes).
func New(clk clock.Clock, kube client.Client, opts Options) *Controller {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	return &Controller{clk: clk, kube: kube, log: opts.Logger.Named(Name), recorder: opts.Recorder, alarms: nodeclaim.NewAlarms(clk),
		health: map[string]poolHealth{}, held: map[string]bool{}}
}

// Alarms are the controller's timers, keyed by Node name, for a caller that
// drives its reconciles itself (the simulator).
func (c *Controller) Alarms() *nodeclaim.Alarms { return c.alarms }

// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups=stowage.dev,resources=nodeclaims,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=stowage.dev,resources=nodepools,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Register adds the controller to mgr: it watches Nodes and its alarms.
func (c *Controller) Register(mgr manager.Manager) error {
	if c.recorder == nil {
		c.recorder = mgr.GetEventRecorder(Name)
	}
	if err := nodeclaim.IndexFields(context.Background(), mgr.GetFieldIndexer(), false); err != nil {
		return err
	}
	return builder.ControllerManagedBy(mgr).Named(Name).For(&corev1.Node{}).WatchesRawSource(c.alarms).Complete(c)
}

// Reconcile repairs the Node named by req once it has been unhealthy for
// its pool's repairAfter, and otherwise sets an alarm for then. A node
// Stowage does not own, one being deleted, and one of a pool with
// repairAfter Never are left alone.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	node := &corev1.Node{}
	if err := c.kube.Get(ctx, req.NamespacedName, node); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	cond := unhealthyCondition(node)
	if cond == nil || !node.DeletionTimestamp.IsZero() {
		c.release(node.Name)
		return reconcile.Result{}, nil
	}
	claim, err := nodeclaim.ClaimForNode(ctx, c.kube, node)
	if err != nil || claim == nil || !claim.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, err
	}
	pool, err := nodeclaim.PoolFor(ctx, c.kube, claim)
	if err != nil || pool == nil {
		return reconcile.Result{}, err
	}
	after, ok := repairAfter(pool)
	if !ok {
		return reconcile.Result{}, nil
	}
	if due := cond.LastTransitionTime.Add(after); c.clk.Now().Before(due) {
		c.alarms.Set(req, due)
		return reconcile.Result{}, nil
	}
	if held, err := c.hold(ctx, node, pool); err != nil || held {
		return reconcile.Result{}, err
	}
	c.release(node.Name)
	return reconcile.Result{}, c.repair(ctx, node, claim, cond, after)
}

// release forgets that a node was held back.
func (c *Controller) release(node string) {
	c.mu.Lock()
	delete(c.held, node)
	c.mu.Unlock()
}

// hold reports whether the pool has too many unhealthy nodes for a repair
// now, and if so looks again in BlockedRecheck, saying so on the node the
// first time.
func (c *Controller) hold(ctx context.Context, node *corev1.Node, pool *v1alpha1.NodePool) (bool, error) {
	h, err := c.poolHealth(ctx, pool.Name)
	if err != nil {
		return false, err
	}
	ok, limit := repairAllowed(h.unhealthy, h.total)
	if ok {
		return false, nil
	}
	c.alarms.Set(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(node)}, c.clk.Now().Add(BlockedRecheck))
	c.mu.Lock()
	first := !c.held[node.Name]
	c.held[node.Name] = true
	c.mu.Unlock()
	if first {
		Blocked.WithLabelValues(pool.Name).Inc()
		c.log.Warn("node repair held back", "node", node.Name, "nodepool", pool.Name, "unhealthy", h.unhealthy, "nodes", h.total, "limit", limit)
		stowevents.Publish(c.recorder, blockedEvent(node, pool.Name, h.unhealthy, h.total, limit))
	}
	return true, nil
}

// poolHealth counts the pool's nodes and the unhealthy ones, once per
// instant of the clock.
func (c *Controller) poolHealth(ctx context.Context, pool string) (poolHealth, error) {
	now := c.clk.Now()
	c.mu.Lock()
	h, ok := c.health[pool]
	c.mu.Unlock()
	if ok && h.at.Equal(now) {
		return h, nil
	}
	nodes := &corev1.NodeList{}
	if err := c.kube.List(ctx, nodes, client.MatchingLabels{v1alpha1.LabelNodePool: pool}, client.UnsafeDisableDeepCopy); err != nil {
		return poolHealth{}, fmt.Errorf("listing the nodes of nodepool %s: %w", pool, err)
	}
	h = poolHealth{at: now, total: len(nodes.Items)}
	for i := range nodes.Items {
		if unhealthyCondition(&nodes.Items[i]) != nil {
			h.unhealthy++
		}
	}
	c.mu.Lock()
	c.health[pool] = h
	c.mu.Unlock()
	return h, nil
}

// repair deletes the node's claim.
func (c *Controller) repair(ctx context.Context, node *corev1.Node, claim *v1alpha1.NodeClaim, cond *corev1.NodeCondition, after time.Duration) error {
	if err := c.kube.Delete(ctx, claim, client.Preconditions{UID: &claim.UID}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting the nodeclaim %s of unhealthy node %s: %w", claim.Name, node.Name, err)
	}
	pool := claim.Labels[v1alpha1.LabelNodePool]
	Repaired.WithLabelValues(pool, conditionLabel(cond)).Inc()
	c.log.Info("repairing unhealthy node", "node", node.Name, "nodeclaim", claim.Name, "nodepool", pool,
		"instance_id", nodeclaim.InstanceID(claim.Status.ProviderID), "reason", cond.Reason, "unhealthy_for", c.clk.Since(cond.LastTransitionTime.Time).String())
	stowevents.Publish(c.recorder, repairedEvent(node, claim, cond, after))
	return nil
}
