package scheduler

import (
	"cmp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// defaultMaxInstanceTypes is CreateFleet's limit on overrides per request.
const defaultMaxInstanceTypes = 60

// upgradeCandidates bounds how many claims a pod considers growing before it
// settles for the cheapest of them, which keeps a solve linear in the claims.
const upgradeCandidates = 16

// solver holds the state of one Solve call.
type solver struct {
	snapshot *Snapshot
	opts     Options
	keys     labelKeys
	pools    []*pool
	nodes    []*node // existing nodes first, then new claims in creation order
	existing int     // how many of nodes are existing
	// fits are the new claims' figures planOnClaims checks first, by index - existing.
	fits     []claimFit
	topology *topology
	classes  map[string]*podClass
	volumes  *volumeTopology
	order    []*corev1.Pod // placed pods in commit order
	// shapes counts, per class and requests, the pods not yet tried: a new
	// claim is sized for the alike pods still to come.
	shapes map[shape]int
	// shapeCosts caches, per shape, what new nodes cost per pod (cost-aware).
	shapeCosts map[shape]shapeCost
	// expected is, per shape, the pods expected soon (Snapshot.Expected) no
	// claim keeps room for yet; shapes counts them too.
	expected map[shape]int
	// tolerationStep is true when some pool has a PreferNoSchedule taint:
	// respect then blocks on such taints until a pod's last relaxation.
	tolerationStep bool
	// fitFrom is requests -> how many existing nodes, from the first, are too
	// full for them. An existing node only fills during a solve, so the count
	// only grows: placing many pods on a large fleet (consolidation's
	// simulations) then skips the full nodes instead of scanning them again.
	fitFrom map[requestsKey]int
	// reserved counts the capacity reservations' places (reserved.go).
	reserved *reservations
}

// Solve decides where every pending pod goes. It is a pure function of the
// snapshot and options: the same input gives the same Results, byte for byte.
func Solve(s *Snapshot, opts Options) *Results {
	if opts.MaxInstanceTypes <= 0 {
		opts.MaxInstanceTypes = defaultMaxInstanceTypes
	}
	if opts.MinValuesPolicy == "" {
		opts.MinValuesPolicy = MinValuesStrict
	}
	switch opts.Preferences = opts.Preferences.orDefault(); opts.Preferences {
	case PreferencesRespect, PreferencesIgnore:
		return solve(s, opts)
	}
	return solveCostAware(s, opts)
}

// solve is one pass of the solver under one policy.
func solve(s *Snapshot, opts Options) *Results {
	sv := newSolver(s, opts)
	pending := sv.podInfos()
	results := &Results{}
	// A pod can need a pod placed after it (pod affinity): pods that fit nowhere
	// are tried again while each pass places at least one of them.
	for tried := 0; len(pending) > 0; {
		var failed []*podInfo
		var reasons []string
		for i, p := range pending {
			if opts.Bound != nil && opts.Bound.Reached(tried) {
				results.Waiting = waiting(pending[i:], tried)
				pending = nil
				break
			}
			tried++
			sv.shapes[p.shape]--
			if reason := sv.place(p); reason != "" {
				failed, reasons = append(failed, p), append(reasons, reason)
			}
		}
		for _, p := range failed {
			sv.shapes[p.shape]++
		}
		if len(failed) == len(pending) || pending == nil {
			for i, p := range failed {
				results.Unschedulable = append(results.Unschedulable, Unschedulable{Pod: p.pod, Reason: reasons[i]})
			}
			break
		}
		pending = failed
	}
	sv.fillFloors()
	sv.finish(results)
	results.Bookings = bookingResults(s, results)
	return results
}

// waiting are the pods a bound left untried, in snapshot order, each with
// the bound as its reason.
func waiting(pods []*podInfo, tried int) []Unschedulable {
	out := make([]Unschedulable, 0, len(pods))
	for _, p := range pods {
		out = append(out, Unschedulable{Pod: p.pod, Reason: reasonSolveBound(tried, len(pods))})
	}
	slices.SortStableFunc(out, func(a, b Unschedulable) int { return comparePods(a.Pod, b.Pod) })
	return out
}

func newSolver(s *Snapshot, opts Options) *solver {
	sv := &solver{snapshot: s, opts: opts, classes: map[string]*podClass{}, shapes: map[shape]int{}, shapeCosts: map[shape]shapeCost{},
		expected: map[shape]int{},
		fitFrom:  map[requestsKey]int{},
		keys:     labelKeys{literal: opts.NoKarpenterLabels}}
	sv.volumes = newVolumeTopology(s)
	for _, np := range sortedPools(s.NodePools) {
		sv.pools = append(sv.pools, newPool(np, sv.windowed(np), s.DaemonSets, sv.keys))
		sv.tolerationStep = sv.tolerationStep || slices.ContainsFunc(np.Spec.Template.Spec.Taints, func(t corev1.Taint) bool {
			return t.Effect == corev1.TaintEffectPreferNoSchedule
		})
	}
	var bound []boundPod
	byName := map[string]*pool{}
	for _, p := range sv.pools {
		byName[p.name] = p
	}
	for _, sn := range sortedStateNodes(s.Nodes) {
		n, pods := sv.existingNode(sn)
		if p, ok := byName[n.labels[v1alpha1.LabelNodePool]]; ok {
			p.nodes++
			p.usage = p.usage.Add(sv.stateNodeCapacity(sn))
		}
		for _, pod := range pods {
			bound = append(bound, boundPod{pod: pod, labels: n.labels, node: n.name})
		}
	}
	for _, sn := range s.LeftOut {
		if p, ok := byName[nodePoolOf(sn)]; ok {
			p.nodes++
			p.usage = p.usage.Add(sv.stateNodeCapacity(sn))
		}
	}
	for _, p := range sv.pools {
		p.baseUsage = p.usage
	}
	sv.topology = newTopology(bound, sv.keys)
	return sv
}

func sortedPools(pools []*v1alpha1.NodePool) []*v1alpha1.NodePool {
	out := slices.Clone(pools)
	weight := func(np *v1alpha1.NodePool) int32 {
		if np.Spec.Weight == nil {
			return 0
		}
		return *np.Spec.Weight
	}
	slices.SortStableFunc(out, func(a, b *v1alpha1.NodePool) int {
		return cmp.Or(cmp.Compare(weight(b), weight(a)), strings.Compare(a.Name, b.Name))
	})
	return out
}

// podInfos builds the pending pods' infos, largest first (CPU, then memory, then
// name), which packs better than arrival order.
func (sv *solver) podInfos() []*podInfo {
	all := sv.snapshot.Pending()
	pods := make([]*podInfo, 0, len(all))
	for i, pod := range all {
		pods = append(pods, &podInfo{pod: pod, requests: sv.snapshot.Requests.Of(pod), index: i, virtual: i >= len(sv.snapshot.Pods),
			priority: PodPriority(pod, sv.snapshot.PriorityClasses)})
	}
	for _, p := range pods {
		p.class = sv.classFor(p.pod)
		p.shape = shapeOf(p)
		sv.shapes[p.shape]++
		if owner := metav1.GetControllerOf(p.pod); owner != nil {
			sv.expected[p.shape] = max(sv.expected[p.shape], sv.snapshot.Expected[owner.UID])
		}
	}
	for sh, n := range sv.expected {
		sv.shapes[sh] += n
	}
	sv.linkMatches()
	// A booking's virtual pods go after every real pod: real pods take room
	// first (booked.go). Higher priorities go first, so that a bound that
	// cuts the solve short leaves the lowest waiting. Pods that own a spread
	// go first: a spread is checked when its owner is placed, so matching
	// pods placed before it only narrow its choice. Pods with pod affinity go after the others, which may be
	// the pods they follow.
	slices.SortStableFunc(pods, func(a, b *podInfo) int {
		return cmp.Or(
			cmp.Compare(boolRank(a.virtual), boolRank(b.virtual)),
			cmp.Compare(b.priority, a.priority),
			cmp.Compare(len(b.class.spreads), len(a.class.spreads)),
			cmp.Compare(followsPods(a.class), followsPods(b.class)),
			cmp.Compare(b.requests.CPU, a.requests.CPU),
			cmp.Compare(b.requests.Memory, a.requests.Memory),
			strings.Compare(a.pod.Namespace, b.pod.Namespace),
			strings.Compare(a.pod.Name, b.pod.Name))
	})
	return pods
}

// followsPods is 1 when the class has required or preferred pod affinity, else 0.
func followsPods(c *podClass) int {
	if c.followsPods {
		return 1
	}
	return 0
}

// place puts one pod somewhere: as the first variant of its ladder that fits
// somewhere, or, cost-aware, as the first that costs little enough. It
// returns the reason when the pod fits nowhere at all.
func (sv *solver) place(p *podInfo) string {
	if p.pod.Spec.NodeName != "" {
		return ""
	}
	if p.class.volumeError != "" {
		return p.class.volumeError
	}
	if sv.opts.Preferences == PreferencesCostAware {
		return sv.placeCostAware(p)
	}
	for _, c := range p.class.ladder {
		if pl := sv.bestPlan(p, c); pl != nil {
			sv.apply(p, c, pl)
			return ""
		}
	}
	return sv.explain(p)
}

// bestPlan is where the pod would go as variant c, without placing it: the
// first existing node or in-flight claim that takes it, else a claim of this
// solve or a new one.
func (sv *solver) bestPlan(p *podInfo, c *podClass) *plan {
	if pl := sv.planOnExisting(p, c); pl != nil {
		return pl
	}
	return sv.planOnClaims(p, c)
}

// apply places the pod as the plan says, opening its claim if it is new.
func (sv *solver) apply(p *podInfo, c *podClass, pl *plan) {
	if pl.fresh {
		sv.addClaim(pl.node)
	}
	sv.commit(p, c, pl)
}

// planOnExisting is the first existing node or in-flight claim that takes the pod.
func (sv *solver) planOnExisting(p *podInfo, c *podClass) *plan {
	from := sv.fitFrom[p.shape.requestsKey]
	for from < sv.existing && !p.requests.Fits(sv.nodes[from].available) {
		from++
	}
	sv.fitFrom[p.shape.requestsKey] = from
	for i := from; i < sv.existing; i++ {
		n := sv.nodes[i]
		if c.skipped(n.index) || !p.requests.Fits(n.available) {
			continue
		}
		if pl := sv.planExisting(p, c, n); pl != nil {
			return pl
		}
	}
	return nil
}

// nodePoolOf is the NodePool a node belongs to, "" for one Stowage does not manage.
func nodePoolOf(sn *StateNode) string {
	if sn.NodeClaim != nil {
		return sn.NodeClaim.Labels[v1alpha1.LabelNodePool]
	}
	if sn.Node != nil {
		return sn.Node.Labels[v1alpha1.LabelNodePool]
	}
	return ""
}
