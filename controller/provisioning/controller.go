package provisioning

import (
	"context"
	"errors"

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
	cluster     *state.Cluster
	batcher     *Batcher
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
	return &Controller{reader: reader, cluster: cluster, batcher: batcher, provisioner: provisioner, log: log}
}

// Register adds the pod reconciler and the batch loop to mgr. A new or
// changed NodePool and a deleted NodeClaim trigger a batch too: pods that no
// pool could take, or whose claim went away, may fit now.
func (c *Controller) Register(mgr manager.Manager) error {
	trigger := handler.Funcs{
		CreateFunc: func(context.Context, event.CreateEvent, workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			c.batcher.Trigger()
		},
		UpdateFunc: func(context.Context, event.UpdateEvent, workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			c.batcher.Trigger()
		},
	}
	deleted := handler.Funcs{
		// A claim being deleted: its node's pods count as pending now.
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if e.ObjectOld.GetDeletionTimestamp() == nil && e.ObjectNew.GetDeletionTimestamp() != nil {
				c.batcher.Trigger()
			}
		},
		DeleteFunc: func(context.Context, event.DeleteEvent, workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			c.batcher.Trigger()
		},
	}
	err := builder.ControllerManagedBy(mgr).Named("provisioning").For(&corev1.Pod{}).
		Watches(&v1alpha1.NodePool{}, trigger).
		Watches(&v1alpha1.NodeClaim{}, deleted).
		Complete(c)
	if err != nil {
		return err
	}
	return mgr.Add(c)
}

// Reconcile triggers a batch when the pod needs capacity: kube-scheduler
// marked it unschedulable and no claim or node is expected to take it.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pod := &corev1.Pod{}
	if err := c.reader.Get(ctx, req.NamespacedName, pod); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if provisionable(pod) && !c.cluster.IsNominated(pod) {
		c.batcher.Trigger()
	}
	return reconcile.Result{}, nil
}

// Start provisions one batch per window until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	for c.batcher.Wait(ctx) {
		c.provision(ctx)
	}
	return nil
}

// NeedLeaderElection is true: only the leader launches nodes.
func (c *Controller) NeedLeaderElection() bool { return true }

// provision runs one batch. An unsynced state or a failed create opens the
// next window, so the pods are tried again once it closes.
func (c *Controller) provision(ctx context.Context) {
	_, err := c.provisioner.Provision(ctx)
	switch {
	case errors.Is(err, ErrNotSynced):
		c.log.Debug("cluster state is not synced; retrying after the next window")
		c.batcher.Trigger()
	case err != nil:
		c.log.Error("provisioning a batch", "error", err)
		c.batcher.Trigger()
	}
}
