package cas

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/utils/clock"

	"github.com/stowage-dev/stowage/controller/scheduling"
)

// Autoscaler is the Cluster Autoscaler model. It is not safe for concurrent use.
type Autoscaler struct {
	clk    clock.PassiveClock
	cfg    Config
	groups []*NodeGroup // sorted by name
	// group name -> group
	byName map[string]*NodeGroup
	// target key (group/zone, zone "" for the template) -> the labels of such a node
	reqs    map[string]scheduling.Requirements
	pods    *podCache
	backoff *backoff
	// node name -> when it was first found unneeded, in its current streak
	unneeded                             map[string]time.Time
	lastScaleUp, lastDelete, lastFailure time.Time
}

// New builds the model over groups with DefaultConfig adjusted by opts. The
// groups are copied; their names must be unique.
func New(clk clock.PassiveClock, groups []NodeGroup, opts ...Option) (*Autoscaler, error) {
	cfg := DefaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("configuring cluster autoscaler model: %w", err)
	}
	a := &Autoscaler{clk: clk, cfg: cfg, byName: map[string]*NodeGroup{}, unneeded: map[string]time.Time{}, reqs: map[string]scheduling.Requirements{}, pods: newPodCache(),
		backoff: newBackoff(cfg.InitialNodeGroupBackoffDuration, cfg.MaxNodeGroupBackoffDuration, cfg.NodeGroupBackoffResetTimeout)}
	for i := range groups {
		g := groups[i]
		if err := g.Validate(); err != nil {
			return nil, fmt.Errorf("configuring cluster autoscaler model: %w", err)
		}
		if _, dup := a.byName[g.Name]; dup {
			return nil, fmt.Errorf("configuring cluster autoscaler model: node group %s is listed twice", g.Name)
		}
		g.Zones = slices.Clone(g.Zones)
		a.byName[g.Name] = &g
		a.groups = append(a.groups, &g)
		for _, z := range append([]string{""}, g.Zones...) {
			a.reqs[g.Name+"/"+z] = g.requirements(z)
		}
	}
	slices.SortFunc(a.groups, func(x, y *NodeGroup) int { return strings.Compare(x.Name, y.Name) })
	return a, nil
}

// Config returns the settings in force.
func (a *Autoscaler) Config() Config { return a.cfg }

// BackedOffUntil reports whether group is backed off now, and until when.
func (a *Autoscaler) BackedOffUntil(group string) (time.Time, bool) {
	info, ok := a.backoff.backedOff(group, a.clk.Now())
	return info.until, ok
}

// RunOnce is one CA loop at the clock's time: time out slow launches, scale up
// for pending pods, and, when no scale-up was attempted, track unneeded nodes
// and delete those past their time. It returns what it did, in order.
func (a *Autoscaler) RunOnce(ctx context.Context, w World) []Action {
	now := a.clk.Now()
	a.backoff.removeStale(now)
	defer a.pods.endLoop()
	nodes := slices.Clone(w.Nodes())
	slices.SortStableFunc(nodes, func(x, y Node) int { return strings.Compare(x.Name, y.Name) })
	actions, removed := a.timeOutLaunches(ctx, w, nodes, now)
	v := newView(nodes, removed)
	up, attempted := a.scaleUp(ctx, w, v, now)
	actions = append(actions, up...)
	if attempted {
		a.lastScaleUp = now
		return actions
	}
	return append(actions, a.scaleDown(ctx, w, v, now)...)
}

// timeOutLaunches backs off the group of every node not Ready within
// MaxNodeProvisionTime and removes the node, as CA does with instances that
// never register. It returns the actions and the nodes removed.
func (a *Autoscaler) timeOutLaunches(ctx context.Context, w World, nodes []Node, now time.Time) ([]Action, map[string]bool) {
	var actions []Action
	removed := map[string]bool{}
	backedOff := map[string]bool{}
	for _, n := range nodes {
		if n.Ready || a.byName[n.Group] == nil || now.Sub(n.CreatedAt) <= a.cfg.MaxNodeProvisionTime {
			continue
		}
		reason := fmt.Sprintf("node not ready within %s", a.cfg.MaxNodeProvisionTime)
		actions = append(actions, Action{At: now, Kind: ActionScaleUpTimedOut, Group: n.Group, Zone: n.Zone, Node: n.Name, Count: 1, Reason: reason})
		if !backedOff[n.Group] {
			backedOff[n.Group] = true
			actions = append(actions, a.backOff(n.Group, "timeout: "+reason, now))
		}
		if err := w.Remove(ctx, n.Name); err != nil {
			actions = append(actions, Action{At: now, Kind: ActionScaleDownFailed, Group: n.Group, Zone: n.Zone, Node: n.Name, Reason: "removing timed-out node: " + err.Error()})
			continue
		}
		removed[n.Name] = true
	}
	return actions, removed
}

// backOff records a failure of group and returns the Backoff action.
func (a *Autoscaler) backOff(group, reason string, now time.Time) Action {
	until := a.backoff.fail(group, reason, now)
	return Action{At: now, Kind: ActionBackoff, Group: group, Until: until, Reason: reason}
}

// view is the cluster one loop works on.
type view struct {
	nodes []Node // sorted by name
	// group -> nodes, Ready or not
	size map[string]int
	// group -> zone -> nodes
	zones map[string]map[string]int
}

func newView(nodes []Node, removed map[string]bool) *view {
	v := &view{size: map[string]int{}, zones: map[string]map[string]int{}}
	for _, n := range nodes {
		if removed[n.Name] {
			continue
		}
		v.nodes = append(v.nodes, n)
		v.size[n.Group]++
		if v.zones[n.Group] == nil {
			v.zones[n.Group] = map[string]int{}
		}
		v.zones[n.Group][n.Zone]++
	}
	return v
}

// zoneCounts returns a copy of group's nodes per zone.
func (v *view) zoneCounts(group string) map[string]int {
	out := maps.Clone(v.zones[group])
	if out == nil {
		out = map[string]int{}
	}
	return out
}
