package simulate

import (
	"cmp"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/scheduling"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

// A pod is launchable when some NodePool it can use has an offering that is
// not short and whose limit has room for one more node of that type:
//
//   - the pool can be used: its NodeClass exists, the pod tolerates its
//     taints, and a node of the offering's type, zone and capacity type, with
//     the pool's labels, satisfies both the pool's requirements and the pod's
//     node selector and required node affinity;
//   - the type fits: the pod's requests, plus those of every DaemonSet whose
//     pod would run on such a node, fit the type's allocatable, pods counted;
//   - the offering is not short: the capacity model lets it start one more
//     instance now (no shortage flag, capacity above zero);
//   - the limit has room: the pool's claims (each launched claim at its
//     type's capacity, each claim not launched yet at the largest type it
//     allows, every claim as one node) plus one node of the type stay within
//     every limit of the pool.
//
// Hard topology is held to the conservative side: a pod with a
// DoNotSchedule spread over zones (or capacity types) is launchable only when
// every zone of the scenario (every capacity type, spot and on-demand) has
// such an offering, since the spread may demand any of them; a spread over
// hostnames, and anti-affinity over hostnames, never stop a new node. A pod
// with required pod affinity, or required anti-affinity over a wider
// domain than a hostname, depends on where other pods run: it is never
// launchable, so the wait invariant does not hold it (the others still do).
type launchability struct {
	s     *Scenario
	facts map[string]typeFact
	names []string
	zones []string
	// workload -> where its pods can go, worked out once
	fits map[*workloadState]*workloadFit
	// workload -> since when it has been launchable without a break
	since map[*workloadState]time.Time
	// evaluated are the workloads judged at this instant; rooms the pools' room now
	evaluated map[*workloadState]bool
	rooms     map[string]*poolRoom
}

// typeFact is one instance type of the catalogue.
type typeFact struct {
	info                  catalogue.Info
	capacity, allocatable scheduling.Resources
}

// workloadFit is where a workload's pods can go.
type workloadFit struct {
	// asserted is false when the pod's constraints depend on other pods.
	asserted bool
	// spread are the topology keys of its DoNotSchedule spreads over zones or capacity types.
	spread []string
	pools  []poolFit
}

// poolFit is one pool a workload can use, with the offerings that fit its pods.
type poolFit struct {
	pool   *v1alpha1.NodePool
	offers []fitOffer
}

type fitOffer struct {
	key      awsemu.PoolKey
	capacity scheduling.Resources
}

var spreadDomains = []string{corev1.LabelTopologyZone, v1alpha1.LabelCapacityType}

func newLaunchability(s *Scenario) *launchability {
	l := &launchability{s: s, facts: map[string]typeFact{}, zones: s.zones(), fits: map[*workloadState]*workloadFit{},
		since: map[*workloadState]time.Time{}, evaluated: map[*workloadState]bool{}}
	opts := catalogue.Options{Region: s.region(), Zones: s.zones()}
	for _, info := range catalogue.Builtin() {
		it := catalogue.NewInstanceType(info, opts, nil)
		l.facts[info.Name] = typeFact{info: info, capacity: it.Capacity, allocatable: it.Allocatable()}
		l.names = append(l.names, info.Name)
	}
	slices.Sort(l.names)
	return l
}

// startInstant forgets the streaks of workloads not judged at the last
// instant (they had no pod waiting), and the pools' room.
func (l *launchability) startInstant(*world) {
	for ws := range l.since {
		if !l.evaluated[ws] {
			delete(l.since, ws)
		}
	}
	clear(l.evaluated)
	l.rooms = map[string]*poolRoom{}
}

// launchableSince is since when the pod has been launchable without a
// break, and whether it is launchable now.
func (l *launchability) launchableSince(w *world, sp *simPod) (time.Time, bool) {
	ws := sp.workload
	if !l.evaluated[ws] {
		l.evaluated[ws] = true
		if l.launchableNow(w, ws) {
			if _, ok := l.since[ws]; !ok {
				l.since[ws] = w.clk.Now()
			}
		} else {
			delete(l.since, ws)
		}
	}
	since, ok := l.since[ws]
	if !ok {
		return time.Time{}, false
	}
	if sp.created.After(since) {
		since = sp.created
	}
	return since, true
}

func (l *launchability) launchableNow(w *world, ws *workloadState) bool {
	fit := l.fitFor(ws)
	if !fit.asserted {
		return false
	}
	for _, d := range l.domains(fit.spread) {
		if !l.anyLaunchable(w, fit, d) {
			return false
		}
	}
	return true
}

// domains are the topology values a spread may demand, as the domain
// strings of offerings; one empty domain (any) without a spread.
func (l *launchability) domains(keys []string) []string {
	out := []string{""}
	for _, key := range keys {
		values := []string{awsemu.CapacityOnDemand, awsemu.CapacitySpot}
		if key == corev1.LabelTopologyZone {
			values = l.zones
		}
		var next []string
		for _, prefix := range out {
			for _, v := range values {
				next = append(next, prefix+"|"+v)
			}
		}
		out = next
	}
	return out
}

func domainOf(o awsemu.PoolKey, keys []string) string {
	d := ""
	for _, key := range keys {
		if key == corev1.LabelTopologyZone {
			d += "|" + o.Zone
		} else {
			d += "|" + o.CapacityType
		}
	}
	return d
}

// anyLaunchable reports whether an offering of the domain, in some pool the
// workload can use, is not short and fits its pool's room.
func (l *launchability) anyLaunchable(w *world, fit *workloadFit, domain string) bool {
	for _, pf := range fit.pools {
		room := l.roomOf(w, pf.pool)
		for _, o := range pf.offers {
			if domainOf(o.key, fit.spread) == domain && room.fits(o.capacity) &&
				!w.short(offer(o.key.InstanceType, o.key.Zone, o.key.CapacityType)) {
				return true
			}
		}
	}
	return false
}

// fitFor works out, once per workload, which pools and offerings fit its pods.
func (l *launchability) fitFor(ws *workloadState) *workloadFit {
	if fit, ok := l.fits[ws]; ok {
		return fit
	}
	pod := &corev1.Pod{ObjectMeta: *ws.template.ObjectMeta.DeepCopy(), Spec: *ws.template.Spec.DeepCopy()}
	fit := &workloadFit{}
	fit.asserted, fit.spread = topologyOf(pod)
	if fit.asserted {
		for _, np := range l.s.NodePools {
			if pf := l.poolFitFor(pod, np); len(pf.offers) > 0 {
				fit.pools = append(fit.pools, pf)
			}
		}
	}
	l.fits[ws] = fit
	return fit
}

// topologyOf says whether the wait invariant holds the pod (its hard
// constraints do not depend on other pods' places), and which spread keys
// its launchability must cover.
func topologyOf(pod *corev1.Pod) (asserted bool, spread []string) {
	if a := pod.Spec.Affinity; a != nil {
		if a.PodAffinity != nil && len(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0 {
			return false, nil
		}
		if a.PodAntiAffinity != nil && slices.ContainsFunc(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution,
			func(t corev1.PodAffinityTerm) bool { return t.TopologyKey != corev1.LabelHostname }) {
			return false, nil
		}
	}
	for _, c := range pod.Spec.TopologySpreadConstraints {
		switch {
		case c.WhenUnsatisfiable != corev1.DoNotSchedule || c.TopologyKey == corev1.LabelHostname:
		case slices.Contains(spreadDomains, c.TopologyKey):
			if !slices.Contains(spread, c.TopologyKey) {
				spread = append(spread, c.TopologyKey)
			}
		default:
			return false, nil
		}
	}
	slices.Sort(spread)
	return true, spread
}

// poolFitFor lists the offerings of np a node for pod could be launched
// from, smallest capacity first.
func (l *launchability) poolFitFor(pod *corev1.Pod, np *v1alpha1.NodePool) poolFit {
	pf := poolFit{pool: np}
	tmpl := np.Spec.Template
	if tmpl.Spec.NodeClassRef == nil || !slices.ContainsFunc(l.s.NodeClasses, func(nc *v1alpha1.NodeClass) bool {
		return nc.Name == tmpl.Spec.NodeClassRef.Name
	}) || scheduling.Tolerates(tmpl.Spec.Taints, pod.Spec.Tolerations) != nil {
		return pf
	}
	reqs := scheduling.FromAPI(tmpl.Spec.Requirements)
	affinity := nodeaffinity.GetRequiredNodeAffinity(pod)
	requests := scheduling.PodRequests(pod)
	for _, name := range l.names {
		fact := l.facts[name]
		for _, zone := range l.zones {
			for _, ct := range []string{awsemu.CapacityOnDemand, awsemu.CapacitySpot} {
				node := l.nodeOf(np, fact.info, zone, ct)
				if ok, _ := affinity.Match(node); !ok || !satisfies(reqs, node.Labels) {
					continue
				}
				// Requests count each pod once (Pods is 1).
				if need := requests.Add(l.daemonOverhead(node, tmpl.Spec.Taints)); !need.Fits(fact.allocatable) {
					continue
				}
				pf.offers = append(pf.offers, fitOffer{key: awsemu.PoolKey{InstanceType: name, Zone: zone, CapacityType: ct}, capacity: fact.capacity})
			}
		}
	}
	slices.SortStableFunc(pf.offers, func(a, b fitOffer) int {
		return cmp.Or(cmp.Compare(a.capacity.CPU, b.capacity.CPU), cmp.Compare(a.capacity.Memory, b.capacity.Memory))
	})
	return pf
}

// nodeOf is the Node a pool would register for an offering: the type's
// labels, the pool's template labels and its name.
func (l *launchability) nodeOf(np *v1alpha1.NodePool, info catalogue.Info, zone, ct string) *corev1.Node {
	ofs := cloudprovider.Offerings{{Zone: zone, CapacityType: ct}}
	labels := catalogue.Requirements(info, l.s.region(), ofs).Labels()
	for k, v := range np.Spec.Template.ObjectMeta.Labels {
		labels[k] = v
	}
	labels[v1alpha1.LabelNodePool] = np.Name
	labels[corev1.LabelHostname] = "launchable"
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: labels}}
}

// satisfies reports whether labels meet every requirement.
func satisfies(reqs scheduling.Requirements, labels map[string]string) bool {
	for _, key := range reqs.Keys() {
		r := reqs.Get(key)
		v, ok := labels[key]
		if (!ok && !r.AllowsAbsent()) || (ok && !r.Has(v)) {
			return false
		}
	}
	return true
}

// daemonOverhead sums the requests of the DaemonSet pods that would run on
// the node, each counting as one pod.
func (l *launchability) daemonOverhead(node *corev1.Node, taints []corev1.Taint) scheduling.Resources {
	var out scheduling.Resources
	for _, ds := range l.s.DaemonSets {
		pod := &corev1.Pod{Spec: ds.Spec.Template.Spec}
		if scheduling.Tolerates(taints, pod.Spec.Tolerations) != nil {
			continue
		}
		if ok, _ := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node); !ok {
			continue
		}
		out = out.Add(scheduling.PodRequests(pod))
	}
	return out
}

// poolRoom is what a pool's limits leave at this instant.
type poolRoom struct {
	limits corev1.ResourceList
	usage  scheduling.Resources
	nodes  int64
}

func (r *poolRoom) fits(capacity scheduling.Resources) bool {
	for rn := range r.limits {
		used, add := r.usage.Get(rn), capacity.Get(rn)
		if rn == resourceNodes {
			used, add = r.nodes, 1
		}
		if used+add > limitValue(r.limits, rn) {
			return false
		}
	}
	return true
}

// roomOf counts the pool's claims, once per instant.
func (l *launchability) roomOf(w *world, np *v1alpha1.NodePool) *poolRoom {
	if r, ok := l.rooms[np.Name]; ok {
		return r
	}
	r := &poolRoom{limits: np.Spec.Limits}
	if len(r.limits) > 0 {
		for _, claim := range w.storedClaims() {
			if claim.Labels[v1alpha1.LabelNodePool] == np.Name {
				r.usage = r.usage.Add(l.claimCapacity(claim))
				r.nodes++
			}
		}
	}
	l.rooms[np.Name] = r
	return r
}

// claimCapacity is a launched claim's type's capacity, or the largest,
// resource by resource, of the types a claim not launched yet allows (its
// requests when it names none).
func (l *launchability) claimCapacity(claim *v1alpha1.NodeClaim) scheduling.Resources {
	if fact, ok := l.facts[claim.Labels[corev1.LabelInstanceTypeStable]]; ok && claim.Status.ProviderID != "" {
		return fact.capacity
	}
	var out scheduling.Resources
	found := false
	for _, r := range claim.Spec.Requirements {
		if r.Key != corev1.LabelInstanceTypeStable || r.Operator != string(corev1.NodeSelectorOpIn) {
			continue
		}
		for _, name := range r.Values {
			if fact, ok := l.facts[name]; ok {
				out, found = out.Max(fact.capacity), true
			}
		}
	}
	if !found {
		return scheduling.FromList(claim.Spec.Resources.Requests)
	}
	return out
}

// describeFit says, for a message, where a workload's pods could go.
func (l *launchability) describeFit(ws *workloadState) string {
	fit := l.fitFor(ws)
	var pools []string
	for _, pf := range fit.pools {
		pools = append(pools, pf.pool.Name)
	}
	return "pools " + strings.Join(pools, ",")
}
