// Package aws implements cloudprovider.CloudProvider on EC2 by composing the
// providers below it: instance types and prices, subnets, security groups,
// AMIs, instance profiles, launch templates and instances.
package aws

import (
	"context"
	"errors"
	"fmt"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"time"

	"github.com/hashicorp/go-hclog"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/amifamily"
	"github.com/stowage-dev/stowage/controller/aws/awserrors"
	"github.com/stowage-dev/stowage/controller/aws/cache"
	"github.com/stowage-dev/stowage/controller/aws/capacityreservation"
	"github.com/stowage-dev/stowage/controller/aws/instance"
	"github.com/stowage-dev/stowage/controller/aws/instanceprofile"
	"github.com/stowage-dev/stowage/controller/aws/instancetype"
	"github.com/stowage-dev/stowage/controller/aws/launchtemplate"
	"github.com/stowage-dev/stowage/controller/aws/pricing"
	"github.com/stowage-dev/stowage/controller/aws/sdk"
	"github.com/stowage-dev/stowage/controller/aws/securitygroup"
	"github.com/stowage-dev/stowage/controller/aws/subnet"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
)

var _ cloudprovider.CloudProvider = (*CloudProvider)(nil)

// Options configure the AWS cloud provider.
type Options struct {
	Cluster           amifamily.Cluster
	Region            string
	KubernetesVersion string
	Clock             clock.Clock
	Logger            hclog.Logger
	// Backoff bounds the shortage memory; cache.DefaultBackoff when zero.
	Backoff cache.Backoff
	// ResolveTTL is how long a NodeClass resolution is reused; 1 minute when zero.
	ResolveTTL time.Duration
	// LaunchAttempts bounds the fleets one Create makes after shortages; 3 when zero.
	LaunchAttempts int
	// ConsistencyWindow is how long after its launch an instance EC2 does not
	// show is taken to be not visible yet rather than gone (EC2's eventual
	// consistency): Delete keeps trying it, Create does not launch the claim
	// again. instance.DefaultConsistencyWindow when zero.
	ConsistencyWindow time.Duration
	// RefreshInterval is how often Start rediscovers instance types, offerings,
	// prices and capacity reservations; 5 minutes when zero.
	RefreshInterval time.Duration
	// GCInterval is how often Start looks for unused launch templates; 10 minutes when zero.
	GCInterval time.Duration
	// LaunchTemplateTTL is how long a launch template may go unused before it is
	// deleted; 1 hour when zero.
	LaunchTemplateTTL time.Duration
	// DryRun (stowage run --dry-run) reads the account and changes nothing:
	// every call that would create, change or delete is refused before it
	// is made (sdk.ReadOnlyEC2, sdk.ReadOnlyIAM), the launch template GC does
	// not run, and a NodeClass's instance profile is named, not created.
	DryRun bool
	// NoKarpenterLabels leaves Karpenter's copies of the selector labels
	// (karpenter.sh/capacity-type, karpenter.k8s.aws/instance-*) off the nodes.
	NoKarpenterLabels bool
	// ClusterARN is the EKS cluster's ARN, which ARC names the cluster's zonal
	// shifts by; with Clients.ARC set, launches avoid the zones it is shifted
	// away from. Empty turns zonal shift awareness off.
	ClusterARN string
	// ZonalShiftInterval is how often Start reads the zonal shifts; 30 seconds when zero.
	ZonalShiftInterval time.Duration
	// Observe, when set, is called after every pass of a background loop
	// (LoopRefresh, LoopLaunchTemplateGC) with its error, for metrics and tests.
	Observe func(loop string, err error)
}

func (o Options) withDefaults() Options {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.ResolveTTL == 0 {
		o.ResolveTTL = time.Minute
	}
	if o.LaunchAttempts == 0 {
		o.LaunchAttempts = 3
	}
	if o.RefreshInterval == 0 {
		o.RefreshInterval = DefaultRefreshInterval
	}
	if o.ZonalShiftInterval == 0 {
		o.ZonalShiftInterval = 30 * time.Second
	}
	if o.GCInterval == 0 {
		o.GCInterval = 10 * time.Minute
	}
	if o.LaunchTemplateTTL == 0 {
		o.LaunchTemplateTTL = time.Hour
	}
	return o
}

// CloudProvider is Stowage's EC2 cloud.
type CloudProvider struct {
	opts         Options
	log          hclog.Logger
	classes      NodeClasses
	reservations *capacityreservation.Provider
	subnets      *subnet.Provider
	sgs          *securitygroup.Provider
	amis         *amifamily.Provider
	profiles     *instanceprofile.Provider
	templates    *launchtemplate.Provider
	prices       *pricing.Provider
	types        *instancetype.Provider
	instances    *instance.Provider
	unavailable  *cache.Unavailable
	shifts       *zonalShifts // nil without ARC
	resolved     resolvedCache
	// listed is the last List's instances, which drift checks read.
	listed listedInstances
}

// New composes the AWS cloud provider from clients.
func New(c Clients, classes NodeClasses, opts Options) *CloudProvider {
	opts = opts.withDefaults()
	if opts.DryRun {
		c.EC2, c.IAM = sdk.ReadOnlyEC2{EC2API: c.EC2}, sdk.ReadOnlyIAM{IAMAPI: c.IAM}
	}
	log := opts.Logger.Named("aws")
	unavailable := cache.NewUnavailable(opts.Clock, opts.Backoff)
	prices := pricing.NewProvider(c.EC2, c.Pricing, opts.Region, opts.Clock, log.Named("pricing"))
	reservations := capacityreservation.NewProvider(c.EC2)
	return &CloudProvider{
		opts: opts, log: log, classes: classes, reservations: reservations,
		subnets:     subnet.NewProvider(c.EC2),
		sgs:         securitygroup.NewProvider(c.EC2),
		amis:        amifamily.NewProvider(c.SSM, c.EC2, opts.KubernetesVersion),
		profiles:    instanceprofile.NewProvider(c.IAM, opts.Cluster.Name),
		templates:   launchtemplate.NewProvider(c.EC2, opts.Cluster.Name, opts.Clock, log.Named("launchtemplate")),
		prices:      prices,
		types:       instancetype.NewProvider(c.EC2, prices, reservations, unavailable, opts.Region, opts.Clock, log.Named("instancetype")),
		instances:   instance.NewProvider(c.EC2, opts.Cluster.Name, opts.Clock, opts.ConsistencyWindow),
		unavailable: unavailable,
		resolved:    resolvedCache{m: map[string]*Resolved{}},
		shifts:      newZonalShifts(c.ARC, opts, log),
	}
}

// Name returns "aws".
func (c *CloudProvider) Name() string { return "aws" }

// Unavailable is the shortage memory.
func (c *CloudProvider) Unavailable() *cache.Unavailable { return c.unavailable }

// NextExpiry is when the next offering the provider avoids as short may be
// tried again (provisioning.ShortageMemory).
func (c *CloudProvider) NextExpiry() time.Time { return c.unavailable.NextExpiry() }

// MarkOfferingUnavailable records that an offering cannot be relied on now, as
// the interruption controller does when a spot interruption notice names an
// instance of it: launches avoid the offering, and InstanceTypes reports it
// unavailable, for the shortage memory's backoff, which it returns.
func (c *CloudProvider) MarkOfferingUnavailable(instanceType, zone, capacityType, reason string) time.Duration {
	d := c.unavailable.MarkUnavailable(cache.Offering{InstanceType: instanceType, Zone: zone, CapacityType: capacityType})
	c.log.Debug("offering unavailable", "instance_type", instanceType, "zone", zone, "capacity_type", capacityType,
		"reason", reason, "avoid_for", d.String())
	return d
}

// Refresh rediscovers prices, capacity reservations, instance types and
// offerings; Start runs it on the clock. Each part is swapped in atomically when
// it succeeds; reads keep the previous one while it runs and when it fails.
func (c *CloudProvider) Refresh(ctx context.Context) error {
	return errors.Join(
		awserrors.WrapUnauthorized(c.prices.Refresh(ctx)),
		awserrors.WrapUnauthorized(c.reservations.Refresh(ctx)),
		awserrors.WrapUnauthorized(c.types.Refresh(ctx)),
	)
}

// InstanceTypes returns the types the pool's NodeClass can launch.
func (c *CloudProvider) InstanceTypes(ctx context.Context, pool *v1alpha1.NodePool) ([]*cloudprovider.InstanceType, error) {
	ref := pool.Spec.Template.Spec.NodeClassRef
	if ref == nil {
		return nil, fmt.Errorf("listing instance types for nodepool %s: no nodeClassRef", pool.Name)
	}
	nc, r, err := c.classFor(ctx, ref.Name)
	if err != nil {
		return nil, err
	}
	types, err := c.types.List(ctx, query(nc, r))
	return c.shifts.withoutShiftedZones(types, r), awserrors.WrapUnauthorized(err)
}

func query(nc *v1alpha1.NodeClass, r *Resolved) instancetype.Query {
	seen := map[string]bool{}
	var zones []string
	for _, s := range r.Subnets {
		if !seen[s.Zone] {
			seen[s.Zone] = true
			zones = append(zones, s.Zone)
		}
	}
	raid0 := nc.Spec.InstanceStorePolicy != nil && *nc.Spec.InstanceStorePolicy == v1alpha1.InstanceStorePolicyRAID0
	var reservations []string
	for _, cr := range r.Reservations {
		reservations = append(reservations, cr.ID)
	}
	return instancetype.Query{Zones: zones, Kubelet: nc.Spec.Kubelet, RootVolumeGiB: ephemeralVolumeGiB(nc), InstanceStoreRAID0: raid0,
		Bottlerocket: amifamily.Family(nc) == amifamily.FamilyBottlerocket,
		Reservations: reservations}
}

// classFor fetches and resolves a NodeClass; failures are NodeClassNotReadyErrors.
func (c *CloudProvider) classFor(ctx context.Context, name string) (*v1alpha1.NodeClass, *Resolved, error) {
	nc, err := c.classes.NodeClass(ctx, name)
	if err != nil {
		return nil, nil, cloudprovider.NewNodeClassNotReadyError(err)
	}
	r, err := c.Resolve(ctx, nc)
	if err != nil {
		return nil, nil, cloudprovider.NewNodeClassNotReadyError(fmt.Errorf("resolving nodeclass %s: %w", name, awserrors.WrapUnauthorized(err)))
	}
	return nc, r, nil
}

// Get returns the claim for a provider id.
func (c *CloudProvider) Get(ctx context.Context, providerID string) (*v1alpha1.NodeClaim, error) {
	id, err := instance.ParseProviderID(providerID)
	if err != nil {
		return nil, cloudprovider.NewNodeClaimNotFoundError(err)
	}
	in, err := c.instances.Get(ctx, id, time.Time{})
	if err != nil {
		return nil, awserrors.WrapUnauthorized(err)
	}
	return c.claimFromInstance(in), nil
}

// List returns a claim for every live instance the cluster owns.
func (c *CloudProvider) List(ctx context.Context) ([]*v1alpha1.NodeClaim, error) {
	ins, err := c.instances.List(ctx)
	if err != nil {
		return nil, awserrors.WrapUnauthorized(err)
	}
	c.listed.put(ins, c.opts.Clock.Now())
	out := make([]*v1alpha1.NodeClaim, 0, len(ins))
	for _, in := range ins {
		out = append(out, c.claimFromInstance(in))
	}
	return out, nil
}

// Delete terminates the claim's instance; NodeClaimNotFoundError once it is
// gone. An instance already shutting down is not terminated again (as
// Karpenter): the termination controller calls Delete until the instance is
// gone, and each call would spend the account's EC2 request quota. An
// instance EC2 does not show within the consistency window of its launch is
// not gone (EC2 may not show it yet, and a NotFound from TerminateInstances
// does not mean it terminated): Delete succeeds without terminating it, to
// be called again.
func (c *CloudProvider) Delete(ctx context.Context, claim *v1alpha1.NodeClaim) error {
	id, err := instance.ParseProviderID(claim.Status.ProviderID)
	if err != nil {
		return cloudprovider.NewNodeClaimNotFoundError(err)
	}
	launched := launchedAt(claim)
	in, err := c.instances.Get(ctx, id, launched)
	if err == nil && in.State == string(ec2types.InstanceStateNameShuttingDown) {
		return nil
	}
	if err == nil {
		err = c.instances.Terminate(ctx, id, launched)
	}
	if instance.IsNotVisible(err) {
		c.log.Debug("instance not visible yet; terminating it later", "nodeclaim", claim.Name, "instance_id", id, "reason", err.Error())
		return nil
	}
	return awserrors.WrapUnauthorized(err)
}

// launchedAt is when the claim's instance launched, as its Launched
// condition says; zero when it does not.
func launchedAt(claim *v1alpha1.NodeClaim) time.Time {
	cond := apimeta.FindStatusCondition(claim.Status.Conditions, v1alpha1.ConditionLaunched)
	if cond == nil || cond.Status != metav1.ConditionTrue {
		return time.Time{}
	}
	return cond.LastTransitionTime.Time
}

// GarbageCollectLaunchTemplates deletes this cluster's launch templates that no
// launch has used for Options.LaunchTemplateTTL; Start runs it on the clock.
func (c *CloudProvider) GarbageCollectLaunchTemplates(ctx context.Context) (int, error) {
	n, err := c.templates.DeleteUnused(ctx, c.opts.LaunchTemplateTTL)
	return n, awserrors.WrapUnauthorized(err)
}
