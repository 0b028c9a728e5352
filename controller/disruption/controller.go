package disruption

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/state"
)

// Name is the controller's name in logs and events.
const Name = "disruption"

// Defaults of Options.
const (
	// DefaultInterval is how often the controller looks for nodes to disrupt.
	DefaultInterval = 10 * time.Second
	// DefaultValidationDelay is how long a consolidation command waits
	// before it is simulated again and executed or dropped (Karpenter's 15
	// seconds): long enough for pods kube-scheduler is binding, and for the
	// provisioner's nominations, to show in the cluster state.
	DefaultValidationDelay = 15 * time.Second
	// DefaultReplacementTimeout is how long a command waits for its
	// replacements to be Initialized before it is rolled back: longer than
	// the NodeClaim lifecycle's registration timeout, so that a replacement
	// that will never come is deleted by it first.
	DefaultReplacementTimeout = 20 * time.Minute
	// ConsolidationGap is how long after a consolidation pass that found
	// nothing the next one waits, however the fleet changes meanwhile (pods
	// bind and leave all the time on a busy cluster): a simulation pass costs
	// far more than a round of the other methods, and a minute is short next
	// to how long consolidateAfter lets nodes wait.
	ConsolidationGap = time.Minute
	// DefaultRevisit is how often a round runs even though the cluster state
	// has not changed (as the reference re-evaluates every 5 minutes), in
	// case something the state does not show (a capacity reservation, say)
	// changed.
	DefaultRevisit = 5 * time.Minute
)

// ErrNotSynced is returned by RunOnce while the cluster state is incomplete:
// nothing was decided, and the next round tries again.
var ErrNotSynced = errors.New("cluster state is not synced")

// InstanceTypes lists what each pool may launch; a CloudProvider does.
type InstanceTypes interface {
	InstanceTypes(ctx context.Context, pool *v1alpha1.NodePool) ([]*cloudprovider.InstanceType, error)
}

// Options tunes the controller; the zero value uses the defaults.
type Options struct {
	// Interval between rounds; DefaultInterval when zero.
	Interval time.Duration
	// ValidationDelay before a consolidation command is re-simulated and
	// executed; DefaultValidationDelay when zero, none when negative.
	ValidationDelay time.Duration
	// ReplacementTimeout bounds the wait for replacements;
	// DefaultReplacementTimeout when zero.
	ReplacementTimeout time.Duration
	// Consolidation tunes the consolidation methods (and carries the solve
	// options every method simulates with: the provisioner's).
	Consolidation ConsolidationOptions
	// Methods in the order they are tried; NewMethods when nil.
	Methods []Method
	// NewID returns a command id; provisioning.RandomSuffix over a seeded
	// generator gives repeatable ids. A random one when nil.
	NewID func() string
	// OnRemove is called after the controller deleted NodeClaims, so that
	// the provisioner provides for their nodes' pods at once.
	OnRemove func()
	// Observer is told about every executed command; nil for none.
	Observer Observer
	// Recorder publishes events; Register uses the manager's when nil, and
	// a controller that is not registered publishes none.
	Recorder events.EventRecorder
	// Logger receives the controller's logs; nothing is logged when nil.
	Logger hclog.Logger
	// DryRun decides and logs every command but starts none (stowage run
	// --dry-run): no replacement is launched, no node tainted or deleted.
	DryRun bool
}

func (o Options) withDefaults() Options {
	o.Interval = orDefault(o.Interval, DefaultInterval)
	o.ReplacementTimeout = orDefault(o.ReplacementTimeout, DefaultReplacementTimeout)
	switch {
	case o.ValidationDelay == 0:
		o.ValidationDelay = DefaultValidationDelay
	case o.ValidationDelay < 0:
		o.ValidationDelay = 0
	}
	o.Consolidation = o.Consolidation.withDefaults()
	if o.Methods == nil {
		o.Methods = NewMethods(o.Consolidation)
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	return o
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// NewMethods returns the disruption methods in the order they are tried.
func NewMethods(opts ConsolidationOptions) []Method {
	return []Method{
		// Drift first: a drifted node runs what the user no longer asked
		// for, and renewing it matters more than saving money.
		NewDrift(opts.Solve),
		// Deleting an empty node moves no pod and launches nothing: the
		// cheapest disruption there is.
		NewEmptiness(),
		// A node on a fallback goes back to the capacity its pool prefers
		// once that capacity has settled: it renews rather than saves, and
		// consolidation then packs the fleet on the preferred capacity.
		NewReturn(opts.Solve),
		// Many nodes at once save most per round, before one at a time.
		NewMultiNode(opts),
		NewSingleNode(opts),
	}
}

// Controller runs the disruption methods every Interval. Each round reads
// the cluster state, moves the commands under way on, and, unless a command
// is still being validated, tries the methods in order: the commands of the
// first that has any are queued, the others wait for the next round, which
// sees the state those commands left.
type Controller struct {
	clk     clock.Clock
	cluster *state.Cluster
	types   InstanceTypes
	opts    Options
	queue   *queue
	log     hclog.Logger

	mu     sync.Mutex // one round at a time
	report reporter
	// settle remembers the last round that found nothing to do, and
	// consolidated the last fleet layout consolidation found nothing on.
	settle, consolidated settled
	// requests remembers pods' requests from the last round, and prices
	// nodes' offerings.
	requests *podRequests
	prices   *nodePrices
	// watch remembers since when each offering has been settled.
	watch offeringWatch
}

var (
	_ manager.Runnable               = (*Controller)(nil)
	_ manager.LeaderElectionRunnable = (*Controller)(nil)
)

// New returns a controller deciding on cluster and the instance types types
// lists, changing Kubernetes through writer, and running on clk.
func New(clk clock.Clock, cluster *state.Cluster, types InstanceTypes, writer ClusterWriter, opts Options) *Controller {
	opts = opts.withDefaults()
	if opts.NewID == nil {
		opts.NewID = provisioning.RandomSuffix(newRand())
	}
	log := opts.Logger.Named(Name)
	c := &Controller{clk: clk, cluster: cluster, types: types, opts: opts, log: log,
		queue: &queue{clk: clk, cluster: cluster, writer: writer, recorder: opts.Recorder, log: log, newID: opts.NewID, opts: opts,
			cooling: map[string]time.Time{}}}
	c.report = newReporter(log, opts.Observer)
	return c
}

// +kubebuilder:rbac:groups=stowage.dev,resources=nodeclaims,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Register adds the controller to mgr, publishing through the manager's
// event recorder unless Options named one.
func (c *Controller) Register(mgr manager.Manager) error {
	if c.queue.recorder == nil {
		c.queue.recorder = mgr.GetEventRecorder(Name)
	}
	return mgr.Add(c)
}

// NeedLeaderElection is true: only the leader disrupts nodes.
func (c *Controller) NeedLeaderElection() bool { return true }

// Start runs a round every Interval on the clock until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	for {
		t := c.clk.NewTimer(c.opts.Interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C():
		}
		switch err := c.RunOnce(ctx); {
		case errors.Is(err, ErrNotSynced):
			c.log.Debug("cluster state is not synced; waiting for the next round")
		case err != nil:
			c.log.Error("running a disruption round", "error", err)
		}
	}
}

// RunOnce runs one round: it moves the queued commands on, then decides on
// the cluster state and queues the first method's commands, if any. It
// returns ErrNotSynced, having done nothing, while the state is incomplete: a
// decision on a partial view could delete a node whose pods it has not seen
// yet. Failures are joined in the error; the rest of the round goes ahead.
func (c *Controller) RunOnce(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.cluster.Synced(ctx) {
		return ErrNotSynced
	}
	gen, types := c.cluster.Generation(), c.instanceTypes(ctx)
	offerings := offeringsKey(types)
	// Every round watches the offerings, skipped or not, so that none comes
	// back from a shortage unseen.
	settled := c.watch.observe(types, c.clk.Now())
	if len(c.queue.pending) == 0 && c.settle.skip(gen, offerings, c.clk.Now()) {
		return nil // nothing under way, and a round on this state found nothing to do
	}
	r := c.newRound(types, offerings)
	r.Settled = settled
	c.report.fleet(r)
	errs := []error{c.queue.progress(ctx, r.Snapshot), c.untaintOrphans(ctx, r)}
	started, err := c.validate(ctx, r)
	errs = append(errs, err)
	// A command that just started changed the cluster the round's snapshot
	// shows: the next round decides on what it left.
	if started || c.queue.validating() || c.settle.skip(gen, offerings, r.Now) {
		return errors.Join(errs...)
	}
	errs = append(errs, c.decide(ctx, r, gen))
	return errors.Join(errs...)
}

// decide tries the methods in order and queues the first one's commands.
func (c *Controller) decide(ctx context.Context, r Round, gen uint64) error {
	r.Busy, r.memo = c.queue.busy(), r.memo.fresh()
	rd := roundDecision{r: r, candidates: NewCandidates(&r), consKey: consolidationKey(r)}
	rd.held = sync.OnceValue(func() bool { return c.consolidationHeld(r.Snapshot) })
	c.settle.reset()
	for _, m := range c.opts.Methods {
		d, ran, err := c.try(ctx, &rd, m)
		if err != nil || !ran {
			if err != nil {
				return err
			}
			continue
		}
		if len(d.Commands) > 0 {
			c.settle.reset()
			c.consolidated.reset()
			return c.queueAll(ctx, m, d.Commands)
		}
	}
	if rd.consRan && !rd.consHeld {
		c.markConsolidated(rd.consKey, rd.consWake, r.Now)
	}
	if !rd.active && len(c.queue.pending) == 0 {
		c.settle.done(gen, r.offerings, r.Now)
	} else {
		c.settle.reset()
	}
	return nil
}

// roundDecision is what one round's methods share and leave behind.
type roundDecision struct {
	r          Round
	candidates []*Candidate
	consKey    uint64
	held       func() bool
	// active: something may change with time alone; consHeld: consolidation
	// was held back; consRan: a consolidation method decided (a skipped one
	// leaves the last pass's record as it was); consWake: when
	// consolidation's waits end.
	active, consHeld, consRan bool
	consWake                  []time.Time
}

// try runs one method's decision, unless it is consolidation and the fleet
// has not changed since it last found nothing, or capacity is being added.
func (c *Controller) try(ctx context.Context, rd *roundDecision, m Method) (d Decision, ran bool, err error) {
	consolidating := m.Reason() == v1alpha1.DisruptionReasonUnderutilized
	if consolidating && (c.consolidated.skip(rd.consKey, 0, rd.r.Now) || c.consolidated.recent(ConsolidationGap, rd.r.Now)) {
		// Skipped, its waits still end when they end: the round that settles
		// now must wake for them, or for the end of the gap.
		c.settle.wake(c.consolidated.wakeAt)
		if c.consolidated.recent(ConsolidationGap, rd.r.Now) {
			c.settle.wake(c.consolidated.at.Add(ConsolidationGap))
		}
		return Decision{}, false, nil
	}
	if consolidating && rd.held() {
		rd.active, rd.consHeld = true, true // what it waits for will change the state
		return Decision{}, false, nil
	}
	start := c.clk.Now()
	d, err = Decide(ctx, m, rd.r, rd.candidates)
	EvaluationDuration.WithLabelValues(m.Name()).Observe(c.clk.Since(start).Seconds())
	if err != nil {
		return Decision{}, false, fmt.Errorf("deciding: %w", err)
	}
	c.report.decision(c.queue.recorder, d)
	rd.active = rd.active || blockedByBudget(d) || d.BudgetErr != nil
	wakes := append([]time.Time{d.WakeAt}, blockEnds(d)...)
	for _, at := range wakes {
		c.settle.wake(at)
	}
	if consolidating {
		rd.consRan, rd.consWake = true, append(rd.consWake, wakes...)
	}
	return d, true, nil
}

// queueAll gives each command an id and queues it.
func (c *Controller) queueAll(ctx context.Context, m Method, cmds []Command) error {
	var errs []error
	for _, cmd := range cmds {
		cmd.ID = c.opts.NewID()
		Decisions.WithLabelValues(cmd.Method, cmd.Reason, cmd.Action()).Inc()
		errs = append(errs, c.queue.add(ctx, m, cmd))
	}
	return errors.Join(errs...)
}

// instanceTypes asks the cloud for each pool's types (see poolTypes).
func (c *Controller) instanceTypes(ctx context.Context) map[string][]*cloudprovider.InstanceType {
	return poolTypes(ctx, c.cluster.NodePools(), c.types, c.log)
}

// poolTypes asks types for each pool's instance types; a pool whose types
// cannot be listed is left without any, so that no capacity comes from it.
func poolTypes(ctx context.Context, pools []*v1alpha1.NodePool, types InstanceTypes, log hclog.Logger) map[string][]*cloudprovider.InstanceType {
	out := map[string][]*cloudprovider.InstanceType{}
	for _, pool := range pools {
		its, err := types.InstanceTypes(ctx, pool)
		if err != nil {
			log.Error("listing instance types", "nodepool", pool.Name, "error", err)
			continue
		}
		out[pool.Name] = its
	}
	return out
}

// newRound reads the cluster state, with the pools' instance types and
// their offerings' key.
func (c *Controller) newRound(types map[string][]*cloudprovider.InstanceType, offerings uint64) Round {
	snap := BookedRoom(c.cluster.Snapshot(nil, types), c.cluster.Bookings(), c.opts.Consolidation.Solve)
	now := c.clk.Now()
	maps.DeleteFunc(c.queue.cooling, func(_ string, until time.Time) bool { return !now.Before(until) })
	c.requests, c.prices = c.requests.next(), c.prices.next(offerings)
	snap.Requests = c.requests.memory()
	return Round{Snapshot: snap, Now: now, Pools: DefaultedPools(snap.NodePools), PDBs: c.cluster.PodDisruptionBudgets(),
		Busy: c.queue.busy(), Cooling: maps.Clone(c.queue.cooling), offerings: offerings,
		memo: &memo{requests: c.requests, prices: c.prices}}
}

// untaintOrphans takes the disrupted taint off nodes no command of this
// process is acting on and no deletion is under way for: a command whose
// controller stopped (a leader change) between tainting and deleting.
func (c *Controller) untaintOrphans(ctx context.Context, r Round) error {
	var errs []error
	for _, sn := range r.Snapshot.Nodes {
		if sn.Node == nil || sn.NodeClaim == nil || sn.MarkedForDeletion || r.Busy[sn.Name()] || !tainted(sn) {
			continue
		}
		c.log.Info("untainting a node no disruption is acting on", "node", sn.Node.Name, "nodeclaim", sn.NodeClaim.Name)
		errs = append(errs, client404(c.queue.writer.SetDisruptedTaint(ctx, sn.Node.Name, false)))
	}
	return errors.Join(errs...)
}

func tainted(sn *scheduler.StateNode) bool {
	for i := range sn.Node.Spec.Taints {
		if sn.Node.Spec.Taints[i].MatchTaint(&v1alpha1.DisruptedNoScheduleTaint) {
			return true
		}
	}
	return false
}
