package simulate_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stowage-dev/stowage/controller/aws/cache"
	"github.com/stowage-dev/stowage/controller/simulate"
	"github.com/stowage-dev/stowage/controller/simulate/report"
)

// The outage of testdata/zone-outage.yaml, and when its pods are evicted: the
// node lifecycle controller's 50 s grace, then the 300 s toleration the
// DefaultTolerationSeconds admission plugin gives every pod.
const (
	outageFrom  = 20 * time.Minute
	outageUntil = 60 * time.Minute
	evictedAt   = outageFrom + 50*time.Second + 300*time.Second
	lostZone    = "us-east-1a"
)

// A lost zone's nodes keep their pods until the unreachable taint's
// toleration runs out, then lose them all; the web tier (no spread) runs
// again in the other zones, nothing launches in the lost zone while it is
// out, and api's DoNotSchedule zone spread leaves its lost replicas pending,
// every one reported with the spread as its reason (not the launch that
// followed the zone's return).
func TestALostZonesPodsAreEvictedWhenTheirTolerationRunsOut(t *testing.T) {
	rep, violations, err := simulate.RunChecked(t.Context(), readScenario(t, "testdata/zone-outage.yaml"), simulate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range violations {
		if !backedOff(v, "pod default/api-", outageUntil) {
			t.Errorf("%s", v)
		}
	}
	stowage := system(t, rep, simulate.SystemStowage)
	if len(stowage.ZoneOutages) != 1 {
		t.Fatalf("zone outages %+v, want the scenario's one", stowage.ZoneOutages)
	}
	z := stowage.ZoneOutages[0]
	series := stowage.Series
	at := func(d time.Duration) int { return int(d / rep.Step) }
	if want := series.NodesByZone[lostZone][at(outageFrom)-1]; z.Zone != lostZone || z.Nodes != want || want == 0 {
		t.Errorf("outage %+v, want %s with its %d nodes", z, lostZone, want)
	}
	if z.PodsLost == 0 || !z.Until.Equal(rep.Start.Add(outageUntil)) {
		t.Errorf("outage %+v: want pods lost, back at %v", z, outageUntil)
	}
	web := series.PendingByTier["web"]
	if n := web[at(evictedAt)-1]; n != 0 {
		t.Errorf("%d web pods pending just before the toleration ran out, want none: the unreachable nodes keep their pods", n)
	}
	if n := web[at(evictedAt)+1]; n == 0 {
		t.Error("no web pod pending just after the toleration ran out: the lost zone's pods were not evicted")
	}
	zoneNodes := series.NodesByZone[lostZone]
	for i := at(outageFrom) + 1; i < at(outageUntil); i++ {
		if zoneNodes[i] > zoneNodes[i-1] {
			t.Errorf("nodes in %s went from %d to %d at %v, while it was out", lostZone, zoneNodes[i-1], zoneNodes[i], time.Duration(i)*rep.Step)
			break
		}
	}
	if tier := tierNamed(stowage, "web"); tier.PodsNeverRan != 0 {
		t.Errorf("%d web pods never ran: the other zones take them", tier.PodsNeverRan)
	}
	// Back within the shortage memory's longest avoidance (3 minutes, as
	// Karpenter's) plus a boot: the zone's offerings are retried soon after.
	if d, ok := z.ToAllRunning(); !ok || d < outageUntil-outageFrom || d > outageUntil-outageFrom+5*time.Minute {
		t.Errorf("every pod Running again %v after the outage began (%v), want after the zone came back (%v) and within 5 minutes of it: "+
			"api's spread needs the zone, and its offerings are avoided for 3 minutes at most", d, ok, outageUntil-outageFrom)
	}
	if spread, other := apiWaits(stowage); spread == 0 || other != 0 {
		t.Errorf("the report puts %d api pods' waits down to the zone spread and %d to something else, want every one to the spread "+
			"(it held them while the zone was out, longer than anything after): %+v", spread, other, stowage.Waits)
	}
}

// backedOff reports whether v is a wait of a pod that must run in the lost
// zone, found within the shortage memory's longest avoidance (3 minutes)
// after the zone's offerings came back at until: the cloud provider avoids
// them until a retry finds them back, which the invariant's bound does not
// allow for.
func backedOff(v simulate.Violation, pods string, until time.Duration) bool {
	return v.Invariant == simulate.InvariantPodWait && strings.HasPrefix(v.Object, pods) &&
		v.At > until && v.At <= until+cache.DefaultBackoff.Max
}

func tierNamed(s report.System, name string) report.Tier {
	for _, t := range s.Tiers {
		if t.Name == name {
			return t
		}
	}
	return report.Tier{}
}

// apiWaits counts the api pods whose long waits the report puts down to
// their zone spread, and those it puts down to anything else.
func apiWaits(s report.System) (spread, other int) {
	for _, w := range s.Waits {
		switch {
		case !strings.HasPrefix(w.Example, "default/api-"):
		case strings.Contains(w.Reason, "topology spread on topology.kubernetes.io/zone"):
			spread += w.Pods
		default:
			other += w.Pods
		}
	}
	return spread, other
}

func TestBadZoneOutagesNameTheField(t *testing.T) {
	base, err := os.ReadFile("testdata/zone-outage.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const outage = "- {zone: us-east-1a, from: 20m, until: 60m, instancesReturn: true}"
	cases := []struct{ name, to, want string }{
		{"unknown zone", "- {zone: us-east-1d, from: 20m, until: 60m}",
			`spec.zoneOutages[0].zone: "us-east-1d" is not a zone of the scenario: use one of us-east-1a, us-east-1b, us-east-1c`},
		{"until before from", "- {zone: us-east-1a, from: 20m, until: 10m}", "spec.zoneOutages[0].until: 10m0s is not after from (20m0s)"},
		{"negative from", "- {zone: us-east-1a, from: -1m}", "spec.zoneOutages[0].from: must not be negative"},
		{"misspelt field", "- {zone: us-east-1a, from: 20m, instancesReturns: true}", `unknown field "instancesReturns"`},
		{"overlap", outage + "\n    - {zone: us-east-1a, from: 50m}", "spec.zoneOutages[1]: overlaps zoneOutages[0] of the same zone"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := strings.Replace(string(base), outage, tc.to, 1)
			if doc == string(base) {
				t.Fatal("the case changes nothing")
			}
			_, err := simulate.ReadScenario(strings.NewReader(doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

// A zone that keeps its instance: node repair replaces the node 30 minutes
// (the pool's default repairAfter) after it went Unknown, as one node of the
// pool's 22 is within the share that may be unhealthy; the zonal pod runs
// again once the zone's offerings are back.
func TestNodeRepairReplacesTheNodeALostZoneKeeps(t *testing.T) {
	rep, violations, err := simulate.RunChecked(t.Context(), readScenario(t, "testdata/node-repair.yaml"), simulate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range violations {
		t.Errorf("%s", v)
	}
	stowage := system(t, rep, simulate.SystemStowage)
	var repairs []report.Consolidation
	for _, c := range stowage.Consolidations {
		if c.Method == "repair" {
			repairs = append(repairs, c)
		}
	}
	wantAt := rep.Start.Add(outageFrom + 50*time.Second + 30*time.Minute)
	if len(repairs) != 1 || !repairs[0].At.Equal(wantAt) || len(repairs[0].Removed) != 1 || repairs[0].Removed[0].Zone != lostZone {
		t.Fatalf("repairs %+v, want the lost zone's node at %v", repairs, wantAt)
	}
	zone := stowage.Series.NodesByZone[lostZone]
	if n := zone[len(zone)-1]; n != 1 {
		t.Errorf("%d nodes in %s at the end, want the zonal pod's new one alone", n, lostZone)
	}
	if z := stowage.ZoneOutages[0]; z.PodsLost != 1 || z.AllRunning.IsZero() {
		t.Errorf("outage %+v, want the zonal pod lost and running again", z)
	}
}

// After a lost zone, the pods it held are re-provisioned in priority order:
// once their toleration runs out they are all pending at once, more than one
// bounded solve can place, and the capacity for the lost checkout pods (high
// priority, c6i.xlarge) is launched before any for the batch pods (low,
// m6i.xlarge); every checkout pod runs no later than the last batch pod, and
// all run in the end. The pod names sort against the priorities, so the order
// comes from the priorities.
func TestALostZonesPodsComeBackInPriorityOrder(t *testing.T) {
	rep, violations, err := simulate.RunChecked(t.Context(), readScenario(t, "testdata/zone-outage-priorities.yaml"), simulate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range violations {
		t.Errorf("%s", v)
	}
	stowage := system(t, rep, simulate.SystemStowage)
	if len(stowage.ZoneOutages) != 1 || stowage.ZoneOutages[0].PodsLost < 20 {
		t.Fatalf("zone outages %+v, want the scenario's one, with a third of the pods lost", stowage.ZoneOutages)
	}
	const from = 10 * time.Minute
	evicted := int((from + 50*time.Second + 300*time.Second) / rep.Step)
	checkout, batch := stowage.Series.PendingByTier["checkout"], stowage.Series.PendingByTier["batch"]
	if checkout[evicted+1] == 0 || batch[evicted+1] == 0 {
		t.Fatalf("pending just after the eviction: checkout %d, batch %d; want both lost pods pending", checkout[evicted+1], batch[evicted+1])
	}
	back := func(pending []int) int {
		for i := evicted + 1; i < len(pending); i++ {
			if pending[i] == 0 {
				return i
			}
		}
		return len(pending)
	}
	launched := func(instanceType string) int {
		nodes := stowage.Series.NodesByInstanceType[instanceType]
		for i := evicted + 1; i < len(nodes); i++ {
			if nodes[i] > nodes[evicted] {
				return i
			}
		}
		return len(nodes)
	}
	// kube-scheduler's backoff lets pods of both tiers bind in the same
	// retry, so the order shows in what was bought first.
	if lc, lb := launched("c6i.xlarge"), launched("m6i.xlarge"); lc >= lb {
		t.Errorf("checkout's first new node launched %v after the eviction, batch's %v: want checkout's capacity bought first",
			time.Duration(lc-evicted)*rep.Step, time.Duration(lb-evicted)*rep.Step)
	}
	c, b := back(checkout), back(batch)
	if c >= len(checkout) || b >= len(batch) {
		t.Fatalf("checkout pending until sample %d, batch until %d, of %d: want every pod running again", c, b, len(checkout))
	}
	// kube-scheduler retries the pending pods when their backoff runs out
	// (schedqueue.go), highest priority first: the last checkout pods may
	// bind in the same retry as the last batch pods, never after.
	if c > b {
		t.Errorf("every lost checkout pod ran %v after the eviction, after every batch pod (they ran by %v): want checkout first",
			time.Duration(c-evicted)*rep.Step, time.Duration(b-evicted)*rep.Step)
	}
	t.Logf("after the eviction: checkout all running in %v, batch in %v", time.Duration(c-evicted)*rep.Step, time.Duration(b-evicted)*rep.Step)
}
