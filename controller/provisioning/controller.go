package provisioning

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/go-hclog"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/state"
)

// Controller reconciles pods, triggering the batcher for every pod that needs
// capacity, and runs the batch loop that provisions each window.
type Controller struct {
	reader      client.Reader
	batcher     *Batcher
	triggers    *Triggers
	provisioner *Provisioner
	log         hclog.Logger
}

var (
	_ reconcile.Reconciler           = (*Controller)(nil)
	_ manager.LeaderElectionRunnable = (*Controller)(nil)
	_ manager.Runnable               = (*Controller)(nil)
)

// NewController returns a controller reading pods from reader; log may be nil.
func NewController(reader client.Reader, cluster *state.Cluster, batcher *Batcher, provisioner *Provisioner, log hclog.Logger) *Controller {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &Controller{reader: reader, batcher: batcher, triggers: NewTriggers(batcher.clk, cluster, batcher),
		provisioner: provisioner, log: log}
}

// Register adds the pod reconciler and the batch loop to mgr, and feeds
// Triggers every change to the NodePools, NodeClaims and Nodes.
func (c *Controller) Register(mgr manager.Manager) error {
	err := builder.ControllerManagedBy(mgr).Named("provisioning").For(&corev1.Pod{}).
		Watches(&v1alpha1.NodePool{}, c.observe()).
		Watches(&v1alpha1.NodeClaim{}, c.observe()).
		Watches(&corev1.Node{}, c.observe()).
		Complete(c)
	if err != nil {
		return err
	}
	return mgr.Add(c)
}

// observe hands every event of a watched kind to Triggers; it enqueues nothing.
func (c *Controller) observe() handler.Funcs {
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			c.triggers.Observe(e.Object, false)
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			c.triggers.Observe(e.ObjectNew, false)
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			c.triggers.Observe(e.Object, true)
		},
	}
}

// Reconcile hands the pod to Triggers, which opens a batch window when the
// pod needs capacity: kube-scheduler marked it unschedulable and no claim or
// node is expected to take it.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pod := &corev1.Pod{}
	if err := c.reader.Get(ctx, req.NamespacedName, pod); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	c.triggers.Observe(pod, false)
	return reconcile.Result{}, nil
}

// Start provisions one batch per window until ctx ends.
// Nominations that lapse are checked alongside.
func (c *Controller) Start(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.triggers.Run(ctx)
	}()
	for c.batcher.Wait(ctx) {
		c.triggers.RetryAt(c.provision(ctx))
		c.triggers.Provisioned()
	}
	<-done
	return nil
}

// NeedLeaderElection is true: only the leader launches nodes.
func (c *Controller) NeedLeaderElection() bool { return true }

// provision runs one batch. An unsynced state or a failed create opens the
// next window, so the pods are tried again once it closes.
func (c *Controller) provision(ctx context.Context) (retryAt time.Time) {
	b, err := c.provisioner.Provision(ctx)
	if b != nil {
		retryAt = b.RetryAt
	}
	switch {
	case errors.Is(err, ErrNotSynced):
		c.log.Debug("cluster state is not synced; retrying after the next window")
		c.batcher.Trigger()
	case err != nil:
		c.log.Error("provisioning a batch", "error", err)
		c.batcher.Trigger()
	}
	return retryAt
}
