// Package garbagecollection terminates instances that no NodeClaim owns: a
// launch whose claim was lost, a claim force-deleted past its finalizer. It
// lists the cloud's instances on an interval of the injected clock, spares
// those younger than a grace period (a launch whose claim status is still
// being written), and deletes the rest, through their Node when one
// registered so that the Node is drained first.
package garbagecollection

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
)

// Name names the controller in logs, metrics and events.
const Name = "nodeclaim-garbagecollection"

// Defaults for Options fields left zero.
const (
	DefaultInterval    = 2 * time.Minute
	DefaultGracePeriod = time.Minute
)

// Options tunes the controller; the zero value uses the defaults above.
type Options struct {
	// Interval is the time between two passes, on the injected clock.
	Interval time.Duration
	// GracePeriod is how old an unowned instance must be before it is deleted.
	GracePeriod time.Duration
	// Logger receives the controller's logs; nothing is logged when nil.
	Logger hclog.Logger
	// Recorder publishes events; Register uses the manager's when nil.
	Recorder events.EventRecorder
}

// pass is the one request this controller reconciles: a whole pass.
var pass = reconcile.Request{NamespacedName: types.NamespacedName{Name: "garbage-collection"}}

// Controller deletes instances no NodeClaim owns.
type Controller struct {
	clk      clock.Clock
	kube     client.Client
	cloud    cloudprovider.CloudProvider
	opts     Options
	log      hclog.Logger
	recorder events.EventRecorder
	alarms   *nodeclaim.Alarms
}

// New returns a controller reading through kube (a manager's client, with the
// indexes Register adds) and deleting through cloud.
func New(clk clock.Clock, kube client.Client, cloud cloudprovider.CloudProvider, opts Options) *Controller {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.GracePeriod <= 0 {
		opts.GracePeriod = DefaultGracePeriod
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	return &Controller{clk: clk, kube: kube, cloud: cloud, opts: opts, log: opts.Logger.Named(Name),
		recorder: opts.Recorder, alarms: nodeclaim.NewAlarms(clk)}
}

// +kubebuilder:rbac:groups=stowage.dev,resources=nodeclaims,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Register adds the controller to mgr. Its first pass runs when the manager
// starts (once elected leader), then one every Interval.
func (c *Controller) Register(mgr manager.Manager) error {
	if err := nodeclaim.IndexFields(context.Background(), mgr.GetFieldIndexer(), false); err != nil {
		return err
	}
	if c.recorder == nil {
		c.recorder = mgr.GetEventRecorder(Name)
	}
	c.alarms.Set(pass, c.clk.Now())
	return builder.ControllerManagedBy(mgr).
		Named(Name).
		WatchesRawSource(c.alarms).
		Complete(c)
}

// Reconcile runs one pass and sets the alarm for the next. A pass that
// failed is retried by the work queue's backoff.
func (c *Controller) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	c.alarms.Set(pass, c.clk.Now().Add(c.opts.Interval))
	return reconcile.Result{}, c.Collect(ctx)
}

// Collect deletes every live instance the cloud lists that is older than the
// grace period and that no NodeClaim owns. A claim owns an instance when its
// status names the instance's provider id, or, while it has no provider id
// yet, when it bears the name the instance was launched for.
func (c *Controller) Collect(ctx context.Context) error {
	instances, err := c.cloud.List(ctx)
	if err != nil {
		return fmt.Errorf("listing instances: %w", err)
	}
	claims := &v1alpha1.NodeClaimList{}
	// Read only: the claims' names and provider ids are all a pass needs.
	if err := c.kube.List(ctx, claims, client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("listing nodeclaims: %w", err)
	}
	owned := owners(claims.Items)
	var errs []error
	for _, instance := range instances {
		if !c.orphaned(instance, owned) {
			continue
		}
		errs = append(errs, c.collect(ctx, instance))
	}
	return errors.Join(errs...)
}

// ownership is what the cluster's claims say they own.
type ownership struct {
	providerIDs map[string]bool // provider ids in claim statuses
	launching   map[string]bool // names of claims without a provider id yet
}

func owners(claims []v1alpha1.NodeClaim) ownership {
	o := ownership{providerIDs: map[string]bool{}, launching: map[string]bool{}}
	for i := range claims {
		if id := claims[i].Status.ProviderID; id != "" {
			o.providerIDs[id] = true
		} else {
			o.launching[claims[i].Name] = true
		}
	}
	return o
}

// orphaned reports whether an instance is live, past its grace period and
// unowned. The cloud reports an instance's launch time as its creation
// timestamp; an instance without one is taken to be old.
func (c *Controller) orphaned(instance *v1alpha1.NodeClaim, owned ownership) bool {
	if !instance.DeletionTimestamp.IsZero() || instance.Status.ProviderID == "" {
		return false
	}
	if owned.providerIDs[instance.Status.ProviderID] || owned.launching[instance.Name] {
		return false
	}
	return c.clk.Since(instance.CreationTimestamp.Time) >= c.opts.GracePeriod
}

// collect deletes the instance's Node when one registered, so that the
// termination controller drains it and then terminates the instance; it
// terminates the instance directly otherwise.
func (c *Controller) collect(ctx context.Context, instance *v1alpha1.NodeClaim) error {
	providerID := instance.Status.ProviderID
	node, err := nodeclaim.NodeForProviderID(ctx, c.kube, providerID)
	if err != nil {
		return err
	}
	if node != nil {
		if err := c.kube.Delete(ctx, node); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting node %s of orphaned instance %s: %w", node.Name, providerID, err)
		}
		publishNodeCollected(c.recorder, node)
	} else if err := cloudprovider.IgnoreNodeClaimNotFoundError(c.cloud.Delete(ctx, instance)); err != nil {
		return fmt.Errorf("deleting orphaned instance %s: %w", providerID, err)
	}
	Collected.WithLabelValues(collectedVia(node)).Inc()
	c.log.Info("garbage collected an instance no nodeclaim owns", "instance_id", nodeclaim.InstanceID(providerID),
		"nodeclaim", instance.Name, "instance_type", instance.Labels[corev1.LabelInstanceTypeStable],
		"node", nodeName(node))
	return nil
}

func collectedVia(node *corev1.Node) string {
	if node != nil {
		return ViaNode
	}
	return ViaInstance
}

func nodeName(node *corev1.Node) string {
	if node == nil {
		return ""
	}
	return node.Name
}
