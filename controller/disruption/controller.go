package disruption

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	stowevents "github.com/stowage-dev/stowage/controller/events"
	"github.com/stowage-dev/stowage/controller/state"
)

// Name is the controller's name in logs and events.
const Name = "disruption"

// DefaultInterval is how often the controller looks for nodes to disrupt.
const DefaultInterval = 10 * time.Second

// ErrNotSynced is returned by RunOnce while the cluster state is incomplete:
// nothing was decided, and the next round tries again.
var ErrNotSynced = errors.New("cluster state is not synced")

// Options tunes the controller; the zero value uses the defaults.
type Options struct {
	// Interval between rounds; DefaultInterval when zero.
	Interval time.Duration
	// Methods in the order they are tried; NewMethods when nil.
	Methods []Method
	// Recorder publishes events; Register uses the manager's when nil, and
	// a controller that is not registered publishes none.
	Recorder events.EventRecorder
	// Logger receives the controller's logs; nothing is logged when nil.
	Logger hclog.Logger
}

// NewMethods returns the disruption methods in the order they are tried.
func NewMethods(clk clock.PassiveClock) []Method {
	return []Method{
		// Deleting an empty node moves no pod and launches nothing: the
		// cheapest disruption there is, so it goes first.
		NewEmptiness(clk),
	}
}

// Controller runs the disruption methods every Interval. Each round reads
// the cluster state, tries the methods in order, and executes the commands
// of the first method that has any; the others wait for the next round,
// which sees the state those commands left.
type Controller struct {
	clk      clock.Clock
	cluster  *state.Cluster
	methods  []Method
	interval time.Duration
	queue    *queue
	log      hclog.Logger

	mu sync.Mutex // one round at a time
	// blocked is method/node -> why the last DisruptionBlocked event said.
	blocked map[string]string
	// gauged is reason -> pools with an AllowedDisruptions series.
	gauged map[string]map[string]bool
	// budgetErrs is method -> the budget problem last logged.
	budgetErrs map[string]string
	// settled is true when the last round found nothing to do, block or wait
	// for, at the cluster state's generation settledAt: a round on the same
	// state would decide the same, so it is skipped.
	settled   bool
	settledAt uint64
}

var (
	_ manager.Runnable               = (*Controller)(nil)
	_ manager.LeaderElectionRunnable = (*Controller)(nil)
)

// New returns a controller deciding on cluster, deleting NodeClaims through
// writer, and running on clk.
func New(clk clock.Clock, cluster *state.Cluster, writer ClusterWriter, opts Options) *Controller {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Methods == nil {
		opts.Methods = NewMethods(clk)
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	log := opts.Logger.Named(Name)
	return &Controller{
		clk: clk, cluster: cluster, methods: opts.Methods, interval: opts.Interval, log: log,
		queue:   &queue{cluster: cluster, writer: writer, recorder: opts.Recorder, log: log},
		blocked: map[string]string{}, gauged: map[string]map[string]bool{}, budgetErrs: map[string]string{},
	}
}

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
		t := c.clk.NewTimer(c.interval)
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

// RunOnce runs one round: it decides on the cluster state and executes the
// first method's commands, if any. It returns ErrNotSynced, having done
// nothing, while the state is incomplete: a decision on a partial view could
// delete a node whose pods it has not seen yet. Deletion failures are joined
// in the error; the other deletions go ahead.
func (c *Controller) RunOnce(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.cluster.Synced(ctx) {
		return ErrNotSynced
	}
	gen := c.cluster.Generation()
	if c.settled && gen == c.settledAt {
		return nil
	}
	snap := c.cluster.Snapshot(nil, nil)
	blocked := map[string]string{}
	defer func() { c.blocked = blocked }()
	c.settled, c.settledAt = true, gen
	for _, m := range c.methods {
		start := c.clk.Now()
		d, err := Decide(ctx, m, snap, start)
		EvaluationDuration.WithLabelValues(m.Name()).Observe(c.clk.Since(start).Seconds())
		if err != nil {
			c.settled = false
			return fmt.Errorf("deciding: %w", err)
		}
		c.report(d, blocked)
		if len(d.Blocked) > 0 || d.BudgetErr != nil || m.Waiting() {
			c.settled = false
		}
		if len(d.Commands) > 0 {
			c.settled = false
			return c.queue.execute(ctx, d.Commands)
		}
	}
	return nil
}

// report publishes what a decision found beyond its commands: the budgets
// as metrics, budget problems and blocked candidates once each until they
// change. blocked collects this round's blocked candidates.
func (c *Controller) report(d Decision, blocked map[string]string) {
	c.gaugeBudgets(d.Method.Reason(), d.Budgets)
	if msg := errString(d.BudgetErr); msg != c.budgetErrs[d.Method.Name()] {
		c.budgetErrs[d.Method.Name()] = msg
		if msg != "" {
			c.log.Error("some disruption budgets cannot be evaluated and allow nothing", "reason", d.Method.Reason(), "error", msg)
		}
	}
	for _, b := range d.Blocked {
		key := d.Method.Name() + "/" + b.Candidate.Name()
		blocked[key] = b.Why
		if c.blocked[key] == b.Why {
			continue
		}
		stowevents.Publish(c.queue.recorder, blockedEvents(b, d.Method)...)
		c.log.Debug("disruption blocked", "node", b.Candidate.Node.Name, "nodeclaim", b.Candidate.NodeClaim.Name,
			"nodepool", b.Candidate.NodePool.Name, "reason", d.Method.Reason(), "why", b.Why)
	}
}

// gaugeBudgets sets the budget gauge of every pool, drops those of pools
// that are gone, and makes the pools' disrupted counters exist at 0.
func (c *Controller) gaugeBudgets(reason string, budgets Budgets) {
	seen := map[string]bool{}
	for pool, n := range budgets {
		AllowedDisruptions.WithLabelValues(pool, reason).Set(float64(n))
		Disrupted.WithLabelValues(pool, reason)
		seen[pool] = true
	}
	for pool := range c.gauged[reason] {
		if !seen[pool] {
			AllowedDisruptions.DeleteLabelValues(pool, reason)
		}
	}
	c.gauged[reason] = seen
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
