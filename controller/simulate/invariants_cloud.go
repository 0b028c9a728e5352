package simulate

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/scheduling"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

// scanEvery is how often the instances are scanned at instants when no
// CreateFleet call was made (a launch is the only thing that can push a pool
// over its limits; an orphan's age needs a scan now and then).
const scanEvery = 10 * time.Second

// resourceNodes is the pseudo-resource a pool limit caps its node count with.
const resourceNodes corev1.ResourceName = "nodes"

// cloudWatch checks the instances against the pools' limits and the claims
// that own them.
type cloudWatch struct {
	lastScan   time.Time
	lastFleets int
	// instance id -> since when no claim has owned it
	orphaned map[string]time.Time
	// nodeclaim -> ids of every instance launched for it
	launches map[string]map[string]bool
	// nodeclaim -> the instant a Nominated event first named it
	firstNamed map[string]time.Time
}

func newCloudWatch() cloudWatch {
	return cloudWatch{orphaned: map[string]time.Time{}, launches: map[string]map[string]bool{}, firstNamed: map[string]time.Time{}}
}

// check scans the instances after every CreateFleet call, every scanEvery,
// and at the end.
func (cw *cloudWatch) check(c *invariantChecker, w *world, final bool) {
	now, fleets := w.clk.Now(), w.emu.Calls("CreateFleet")
	if !final && fleets == cw.lastFleets && now.Sub(cw.lastScan) < scanEvery {
		return
	}
	cw.lastScan, cw.lastFleets = now, fleets
	instances := w.emu.Instances()
	cw.checkLimits(c, w, instances)
	cw.checkOwners(c, w, instances, final)
}

func live(in awsemu.Instance) bool {
	return in.State == awsemu.StatePending || in.State == awsemu.StateRunning
}

// checkLimits sums the capacity of each pool's live instances (by their pool
// tag) and compares it with the pool's limits.
func (cw *cloudWatch) checkLimits(c *invariantChecker, w *world, instances []awsemu.Instance) {
	usage, nodes, ids := map[string]scheduling.Resources{}, map[string]int64{}, map[string][]string{}
	for _, in := range instances {
		if !live(in) {
			continue
		}
		pool := in.Tags[v1alpha1.LabelNodePool]
		usage[pool] = usage[pool].Add(c.launch.facts[in.InstanceType].capacity)
		nodes[pool]++
		ids[pool] = append(ids[pool], in.InstanceType)
	}
	for _, np := range w.s.NodePools {
		for _, rn := range slices.Sorted(maps.Keys(np.Spec.Limits)) {
			limit, used := limitValue(np.Spec.Limits, rn), usage[np.Name].Get(rn)
			if rn == resourceNodes {
				used = nodes[np.Name]
			}
			if used > limit {
				c.report(w, InvariantPoolLimit, "nodepool "+np.Name, "%s: %d live instances bring %d, over the limit %d (%s)",
					rn, nodes[np.Name], used, limit, strings.Join(ids[np.Name], " "))
			}
		}
	}
}

// limitValue is a limit in the units scheduling.Resources counts in.
func limitValue(limits corev1.ResourceList, rn corev1.ResourceName) int64 {
	q := limits[rn]
	if rn == corev1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// checkOwners checks that each claim launched one instance at most, and that
// every live instance is owned: its claim exists and records it, or records
// none yet.
func (cw *cloudWatch) checkOwners(c *invariantChecker, w *world, instances []awsemu.Instance, final bool) {
	now := w.clk.Now()
	for _, in := range instances {
		name := in.Tags[v1alpha1.LabelNodeClaim]
		if cw.launches[name] == nil {
			cw.launches[name] = map[string]bool{}
		}
		cw.launches[name][in.ID] = true
		if n := len(cw.launches[name]); n > 1 {
			c.report(w, InvariantDuplicate, "nodeclaim "+name, "%d instances launched for it: %s", n, strings.Join(slices.Sorted(maps.Keys(cw.launches[name])), " "))
		}
		if !live(in) {
			delete(cw.orphaned, in.ID)
			continue
		}
		claim, exists := w.claim(name)
		if exists && (claim.Status.ProviderID == "" || strings.HasSuffix(claim.Status.ProviderID, "/"+in.ID)) {
			delete(cw.orphaned, in.ID)
			continue
		}
		since, seen := cw.orphaned[in.ID]
		if !seen {
			since, cw.orphaned[in.ID] = now, now
		}
		if final || now.Sub(since) > c.bounds.Orphan {
			why := "its nodeclaim " + name + " is gone"
			if exists {
				why = "its nodeclaim " + name + " records " + claim.Status.ProviderID
			}
			c.report(w, InvariantInstanceLeak, "instance "+in.ID, "%s %s in %s, launched at %s: %s, unowned for %s",
				in.State, in.InstanceType, in.Zone, in.LaunchTime.Sub(epoch), why, now.Sub(since))
		}
	}
}

// newClaim reports whether a Nominated event names the claim for the first
// time at this instant: the batch that created it.
func (cw *cloudWatch) newClaim(w *world, name string) bool {
	first, ok := cw.firstNamed[name]
	if !ok {
		cw.firstNamed[name] = w.clk.Now()
		return true
	}
	return first.Equal(w.clk.Now())
}

var nodeClaimType = reflect.TypeOf(&v1alpha1.NodeClaim{})

// claim is the stored NodeClaim of that name, which the caller must not change.
func (w *world) claim(name string) (*v1alpha1.NodeClaim, bool) {
	obj, ok := w.kube.mirror.objects[nodeClaimType]["/"+name]
	if !ok {
		return nil, false
	}
	return obj.(*v1alpha1.NodeClaim), true
}

// storedClaims lists the stored NodeClaims, which the caller must not change, by name.
func (w *world) storedClaims() []*v1alpha1.NodeClaim {
	objs := w.kube.mirror.objects[nodeClaimType]
	out := make([]*v1alpha1.NodeClaim, 0, len(objs))
	for _, k := range sortedKeys(objs) {
		out = append(out, objs[k].(*v1alpha1.NodeClaim))
	}
	return out
}
