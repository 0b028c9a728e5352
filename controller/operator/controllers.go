package operator

import (
	"context"
	crand "crypto/rand"
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/hashicorp/go-hclog"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/stowage-dev/stowage/controller/capacitybuffer"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	cpmetrics "github.com/stowage-dev/stowage/controller/cloudprovider/metrics"
	"github.com/stowage-dev/stowage/controller/disruption"
	"github.com/stowage-dev/stowage/controller/interruption"
	"github.com/stowage-dev/stowage/controller/nodeclaim/capacityblock"
	"github.com/stowage-dev/stowage/controller/nodeclaim/drift"
	"github.com/stowage-dev/stowage/controller/nodeclaim/expiration"
	"github.com/stowage-dev/stowage/controller/nodeclaim/garbagecollection"
	"github.com/stowage-dev/stowage/controller/nodeclaim/lifecycle"
	"github.com/stowage-dev/stowage/controller/nodeclaim/podevents"
	"github.com/stowage-dev/stowage/controller/nodeclaim/repair"
	"github.com/stowage-dev/stowage/controller/nodeclass"
	"github.com/stowage-dev/stowage/controller/nodepool"
	"github.com/stowage-dev/stowage/controller/options"
	"github.com/stowage-dev/stowage/controller/provisioning"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/provisioningrequest"
	"github.com/stowage-dev/stowage/controller/state"
	"github.com/stowage-dev/stowage/controller/state/informer"
	"github.com/stowage-dev/stowage/controller/termination"
)

// CloudFactory builds the cloud provider once the manager exists, so that
// the provider can read NodeClasses through the manager's cache (NodeClasses).
type CloudFactory func(mgr manager.Manager) (cloudprovider.CloudProvider, error)

// Operator is one `stowage run` process: a manager with every controller
// registered on it. Only the elected leader's controllers act; a standby keeps
// its caches and cluster state warm so that it can take over at once.
type Operator struct {
	Manager manager.Manager
	// Cluster is the in-memory view the provisioner decides on.
	Cluster *state.Cluster
	// Cloud is what the controllers call: the factory's provider, decorated
	// with the cloud provider metrics.
	Cloud cloudprovider.CloudProvider
}

// Option adjusts what New wires; tests inject a clock, claim names and
// manager settings through them.
type Option func(*settings)

type settings struct {
	clock        clock.Clock
	newID        func() string
	managerEdits []func(*manager.Options)
	// provisionerOpts are what the cloud adds to the provisioner's options.
	provisionerOpts []provisioning.Option
}

// WithClock sets the clock every controller runs on; clock.RealClock by default.
func WithClock(clk clock.Clock) Option { return func(s *settings) { s.clock = clk } }

// WithNodeClaimNames sets the source of NodeClaim name suffixes; random by default.
func WithNodeClaimNames(newID func() string) Option { return func(s *settings) { s.newID = newID } }

// WithManagerOptions adjusts the manager's options after NewManager's own,
// e.g. to free the ports or allow two managers in one process.
func WithManagerOptions(edit func(*manager.Options)) Option {
	return func(s *settings) { s.managerEdits = append(s.managerEdits, edit) }
}

// cloudMetrics registers the cloud provider collectors once per process, as
// the controllers' own metrics do, however many operators a test runs.
var cloudMetrics = sync.OnceValue(func() *cpmetrics.Metrics { return cpmetrics.New(crmetrics.Registry) })

// New builds the manager from validated options, the cloud provider through
// newCloud, and registers the cluster state informers and the provisioning,
// NodeClaim lifecycle, drift, expiration, termination, garbage collection,
// interruption, disruption and NodePool status controllers, and the NodeClass status
// controller when the provider is a nodeclass.Resolver. When
// the provider has background work (it is a manager.Runnable, as the AWS
// provider's catalogue refresh is) the manager runs it on the leader.
func New(ctx context.Context, cfg *rest.Config, o *options.Options, newCloud CloudFactory, log hclog.Logger, opts ...Option) (*Operator, error) {
	s := settings{clock: clock.RealClock{}}
	for _, opt := range opts {
		opt(&s)
	}
	if s.newID == nil {
		s.newID = provisioning.RandomSuffix(newRand())
	}
	mgr, err := NewManager(cfg, o, log, s.managerEdits...)
	if err != nil {
		return nil, err
	}
	cloud, err := newCloud(mgr)
	if err != nil {
		return nil, fmt.Errorf("building the cloud provider: %w", err)
	}
	if r, ok := cloud.(manager.Runnable); ok {
		if err := mgr.Add(r); err != nil {
			return nil, fmt.Errorf("adding the cloud provider's background loops: %w", err)
		}
	}
	op := &Operator{Manager: mgr, Cluster: state.NewCluster(s.clock), Cloud: cpmetrics.Decorate(cloud, cloudMetrics(), s.clock)}
	// The interruption controller tells the cloud's shortage memory about an
	// interrupted offering, when the cloud has one.
	marker, _ := cloud.(interruption.OfferingMarker)
	// The NodeClass status controller resolves classes through the cloud,
	// when it can; without, it is not run.
	resolver, _ := cloud.(nodeclass.Resolver)
	// The provisioner tries pods a shortage left unschedulable again when
	// the cloud would try a short offering again, when it remembers them.
	if memory, ok := cloud.(provisioning.ShortageMemory); ok {
		s.provisionerOpts = append(s.provisionerOpts, provisioning.WithShortageMemory(memory))
	}
	if err := op.register(ctx, o, s, marker, resolver, log); err != nil {
		return nil, err
	}
	return op, nil
}

// registrar is a controller that adds itself to a manager.
type registrar interface {
	Register(mgr manager.Manager) error
}

// namedRegistrar is a registrar with the name its errors are reported under.
type namedRegistrar struct {
	name string
	r    registrar
}

func (op *Operator) register(ctx context.Context, o *options.Options, s settings, marker interruption.OfferingMarker,
	resolver nodeclass.Resolver, log hclog.Logger) error {
	mgr, clk, kube := op.Manager, s.clock, op.Manager.GetClient()
	if err := informer.Register(ctx, mgr.GetCache(), op.Cluster); err != nil {
		return fmt.Errorf("registering the cluster state informers: %w", err)
	}
	batcher := provisioning.NewBatcher(clk, provisioning.BatcherOptions{IdleDuration: o.BatchIdle, MaxDuration: o.BatchMax})
	recorder := provisioning.KubeRecorder{Recorder: mgr.GetEventRecorder("provisioning")}
	// One set of solve options for the provisioner and every simulation
	// disruption runs, so that both answer "where would these pods go" alike.
	solve := scheduler.Options{Preferences: o.Preferences, NoKarpenterLabels: !o.KarpenterLabels}
	buffers := capacitybuffer.New(clk, kube, op.Cluster, capacitybuffer.Options{Trigger: batcher.Trigger, Logger: log, DryRun: o.DryRun})
	requests := provisioningrequest.New(clk, kube, op.Cluster, op.Cloud, provisioningrequest.Options{Trigger: batcher.Trigger, Logger: log, Solve: solve})
	observe := func(r []scheduler.BookingResult) { buffers.Observe(r); requests.Observe(r) }
	provisionerOpts := []provisioning.Option{provisioning.WithLogger(log.Named("provisioning")), provisioning.WithClock(clk),
		provisioning.WithSolveOptions(solve), provisioning.WithBookingObserver(observe)}
	provisionerOpts = append(provisionerOpts, s.provisionerOpts...)
	if o.DryRun {
		provisionerOpts = append(provisionerOpts, provisioning.WithDryRun())
	}
	provisioner := provisioning.NewProvisioner(op.Cluster, op.Cloud, provisioning.ClientWriter{Client: kube}, recorder, s.newID, provisionerOpts...)
	controllers := []namedRegistrar{
		{"provisioning", provisioning.NewController(kube, op.Cluster, batcher, provisioner, log.Named("provisioning"))},
		{lifecycle.Name, lifecycle.New(clk, kube, op.Cloud, lifecycle.Options{Logger: log})},
		{termination.Name, termination.New(clk, kube, op.Cloud, termination.Options{Logger: log,
			Homes: disruption.NewHomes(clk, op.Cluster, op.Cloud, solve)})},
		{garbagecollection.Name, garbagecollection.New(clk, kube, op.Cloud, garbagecollection.Options{Logger: log})},
		{interruption.Name, interruption.New(clk, kube, marker, interruption.Options{Logger: log})},
		{drift.Name, drift.New(clk, kube, op.Cloud, drift.Options{Logger: log})},
		{expiration.Name, expiration.New(clk, kube, expiration.Options{Logger: log})},
		{repair.Name, repair.New(clk, kube, repair.Options{Logger: log})},
		{podevents.Name, podevents.New(clk, kube, podevents.Options{Logger: log})},
		{capacityblock.Name, capacityblock.New(clk, kube, capacityblock.Options{Logger: log})},
		{capacitybuffer.Name, buffers},
		{provisioningrequest.Name, requests},
		{disruption.Name, disruption.New(clk, op.Cluster, op.Cloud, disruption.ClientWriter{Client: kube},
			disruptionOptions(o, solve, batcher.Trigger, log))},
		{nodepool.Name, nodepool.New(clk, kube, nodepool.Options{Logger: log})},
	}
	if resolver != nil {
		controllers = append(controllers, namedRegistrar{nodeclass.Name, nodeclass.New(clk, kube, resolver, nodeclass.Options{Logger: log})})
	}
	if o.DryRun {
		controllers = observers(controllers)
	}
	for _, c := range controllers {
		if err := c.r.Register(mgr); err != nil {
			return fmt.Errorf("registering the %s controller: %w", c.name, err)
		}
	}
	return nil
}

// disruptionOptions are the disruption controller's settings from the flags:
// it simulates with the provisioner's solve options, and wakes the
// provisioner when it deletes NodeClaims, so that their pods' new capacity
// is launched at once.
func disruptionOptions(o *options.Options, solve scheduler.Options, onRemove func(), log hclog.Logger) disruption.Options {
	share := o.ConsolidationMinSavings
	if share == 0 {
		share = -1 // any saving: the disruption package reads 0 as its default
	}
	return disruption.Options{Logger: log, OnRemove: onRemove, Consolidation: disruption.ConsolidationOptions{
		Solve: solve, SpotToSpot: o.SpotToSpotConsolidation, MinSavingsShare: share, RecentWindow: o.ConsolidationRecentWindow,
	}, DryRun: o.DryRun}
}

// Start runs the manager, and with it every controller, until ctx ends.
func (op *Operator) Start(ctx context.Context) error { return op.Manager.Start(ctx) }

// Run is New then Start: `stowage run` after it has parsed its options.
func Run(ctx context.Context, cfg *rest.Config, o *options.Options, newCloud CloudFactory, log hclog.Logger, opts ...Option) error {
	op, err := New(ctx, cfg, o, newCloud, log, opts...)
	if err != nil {
		return err
	}
	return op.Start(ctx)
}

// newRand seeds a generator from the system's entropy: replicas must not
// pick the same claim names.
func newRand() *rand.Rand {
	var seed [32]byte
	_, _ = crand.Read(seed[:]) // never fails on supported platforms
	return rand.New(rand.NewChaCha8(seed))
}

// observers keeps, for a dry run, the controllers that decide and report:
// provisioning and disruption (deciding, acting on nothing), the NodePool
// and NodeClass status, and the CapacityBuffers' room (its status unwritten). The NodeClaim lifecycle, termination,
// garbage collection and interruption controllers act on nodes Stowage
// would own, and are left out.
func observers(all []namedRegistrar) []namedRegistrar {
	keep := map[string]bool{"provisioning": true, disruption.Name: true, nodepool.Name: true, nodeclass.Name: true, capacitybuffer.Name: true}
	out := all[:0]
	for _, c := range all {
		if keep[c.name] {
			out = append(out, c)
		}
	}
	return out
}
