package disruption

import (
	crand "crypto/rand"
	"encoding/binary"
	"hash/fnv"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// reporter publishes what each decision found beyond its commands: metrics,
// budget problems, and one event per blocked candidate until its blocker
// changes.
type reporter struct {
	log      hclog.Logger
	observer Observer
	// blocked is method -> node -> the blocker the last event named.
	blocked map[string]map[string]string
	// gauged is reason -> pools with a budget series; kinds is method ->
	// blockers with a series; pools are those with a fleet cost series.
	gauged, kinds map[string]map[string]bool
	pools         map[string]bool
	// budgetErrs is method -> the budget problem last logged.
	budgetErrs map[string]string
}

func newReporter(log hclog.Logger, observer Observer) reporter {
	return reporter{log: log, observer: observer, blocked: map[string]map[string]string{}, gauged: map[string]map[string]bool{},
		kinds: map[string]map[string]bool{}, pools: map[string]bool{}, budgetErrs: map[string]string{}}
}

// decision publishes one method's decision.
func (rp *reporter) decision(rec events.EventRecorder, d Decision) {
	name := d.Method.Name()
	rp.gaugeBudgets(d.Method.Reason(), d.Budgets)
	EligibleNodes.WithLabelValues(name).Set(float64(d.Eligible))
	if msg := errString(d.BudgetErr); msg != rp.budgetErrs[name] {
		rp.budgetErrs[name] = msg
		if msg != "" {
			rp.log.Error("some disruption budgets cannot be evaluated and allow nothing", "reason", d.Method.Reason(), "error", msg)
		}
	}
	now, counts := map[string]string{}, map[string]int{}
	for _, b := range d.Blocked {
		key := b.Kind + ": " + b.Why
		now[b.Candidate.Name()], counts[b.Kind] = key, counts[b.Kind]+1
		if rp.blocked[name][b.Candidate.Name()] == key {
			continue
		}
		publish(rec, blockedEvents(b, d.Method)...)
		if rp.observer != nil {
			rp.observer.Blocked(d.Method, b)
		}
		rp.log.Debug("disruption blocked", "node", b.Candidate.Node.Name, "nodeclaim", b.Candidate.NodeClaim.Name,
			"nodepool", b.Candidate.NodePool.Name, "method", name, "reason", d.Method.Reason(), "blocker", b.Kind, "why", b.Why)
	}
	rp.blocked[name] = now
	rp.kinds[name] = setGauges(BlockedCandidates.MustCurryWith(map[string]string{LabelMethod: name}), rp.kinds[name], counts)
}

// setGauges sets each label value's gauge, zeroes those seen before and not
// now, and returns the values seen.
func setGauges(vec *prometheus.GaugeVec, before map[string]bool, counts map[string]int) map[string]bool {
	seen := map[string]bool{}
	for k := range before {
		seen[k] = true
		vec.WithLabelValues(k).Set(0)
	}
	for k, n := range counts {
		seen[k] = true
		vec.WithLabelValues(k).Set(float64(n))
	}
	return seen
}

// gaugeBudgets sets the budget gauge of every pool, drops those of pools
// that are gone, and makes the pools' disrupted counters exist at 0.
func (rp *reporter) gaugeBudgets(reason string, budgets Budgets) {
	seen := map[string]bool{}
	for pool, n := range budgets {
		AllowedDisruptions.WithLabelValues(pool, reason).Set(float64(n))
		Disrupted.WithLabelValues(pool, reason)
		seen[pool] = true
	}
	for pool := range rp.gauged[reason] {
		if !seen[pool] {
			AllowedDisruptions.DeleteLabelValues(pool, reason)
		}
	}
	rp.gauged[reason] = seen
}

// fleet sets every pool's fleet cost: the price of each node Stowage manages
// (being deleted or not) at the offering it runs on.
func (rp *reporter) fleet(r Round) {
	cost := fleetCosts(r.Snapshot, r.offering)
	for pool := range rp.pools {
		if _, ok := cost[pool]; !ok {
			FleetCost.DeleteLabelValues(pool)
		}
	}
	rp.pools = map[string]bool{}
	for pool, v := range cost {
		FleetCost.WithLabelValues(pool).Set(v)
		rp.pools[pool] = true
	}
}

// FleetCosts is NodePool name -> the hourly price of its nodes and launched
// claims, each at the offering it runs on, as the pool's instance types
// price it.
func FleetCosts(snap *scheduler.Snapshot) map[string]float64 {
	prices := newPriceIndex(snap)
	return fleetCosts(snap, func(pool string, node *corev1.Node) NodeOffering { return prices.offering(pool, node) })
}

func fleetCosts(snap *scheduler.Snapshot, offering func(pool string, node *corev1.Node) NodeOffering) map[string]float64 {
	out := map[string]float64{}
	for _, pool := range snap.NodePools {
		out[pool.Name] = 0
	}
	for _, sn := range snap.Nodes {
		if sn.NodeClaim == nil || sn.Node == nil {
			continue
		}
		pool := sn.NodeClaim.Labels[v1alpha1.LabelNodePool]
		if _, ok := out[pool]; ok {
			out[pool] += offering(pool, sn.Node).Price
		}
	}
	return out
}

// offeringsKey digests the pools' offerings (prices and availability), so
// that a round runs again when they change though the cluster state did not.
func offeringsKey(types map[string][]*cloudprovider.InstanceType) uint64 {
	h := fnv.New64a()
	var buf [9]byte
	for _, pool := range slices.Sorted(maps.Keys(types)) {
		h.Write([]byte(pool))
		for _, it := range types[pool] {
			h.Write([]byte(it.Name))
			for _, o := range it.Offerings {
				h.Write([]byte(o.Zone))
				h.Write([]byte(o.CapacityType))
				binary.LittleEndian.PutUint64(buf[:8], math.Float64bits(o.Price))
				buf[8] = 0
				if o.Available {
					buf[8] = 1
				}
				h.Write(buf[:])
			}
		}
	}
	return h.Sum64()
}

// consolidationKey digests the fleet's layout as consolidation sees it: each
// node, whether it is marked, Ready or nominated, when a pod last bound to it
// or left it, the offerings, and how many disruptions each PDB allows (a
// candidate a PDB blocked is worth trying again once it allows one). Pod
// status writes, which change the cluster state all the time, do not change
// it.
func consolidationKey(r Round) uint64 {
	snap := r.Snapshot
	h := fnv.New64a()
	for _, pdb := range r.PDBs {
		h.Write([]byte(pdb.Namespace + "/" + pdb.Name + "=" + strconv.FormatInt(int64(pdb.Status.DisruptionsAllowed), 10) + ";"))
	}
	h.Write([]byte(strconv.FormatUint(r.offerings, 16)))
	for _, sn := range snap.Nodes {
		h.Write([]byte(sn.Name()))
		if sn.NodeClaim != nil {
			h.Write([]byte(sn.NodeClaim.UID))
		}
		ready := sn.Node != nil && nodeReady(sn.Node)
		h.Write([]byte(strconv.FormatInt(sn.LastPodEvent.UnixNano(), 16) + strconv.FormatBool(sn.MarkedForDeletion) +
			strconv.FormatBool(sn.Nominated) + strconv.FormatBool(ready)))
	}
	return h.Sum64()
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// newRand seeds command ids from the system's entropy: replicas must not
// pick the same ones.
func newRand() *rand.Rand {
	var seed [32]byte
	_, _ = crand.Read(seed[:]) // never fails on supported platforms
	return rand.New(rand.NewChaCha8(seed))
}
