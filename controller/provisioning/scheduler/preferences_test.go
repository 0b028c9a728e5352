package scheduler_test

import (
	"fmt"
	"os"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler/schedulertest"
	"github.com/stowage-dev/stowage/controller/snapshotfile"
)

// This file covers the preference policies: respect's relaxation order step
// by step (Karpenter's: required node-affinity terms one at a time,
// preferred pod affinity, preferred pod anti-affinity heaviest first,
// preferred node affinity heaviest first, ScheduleAnyway spreads,
// PreferNoSchedule taints), ignore, and cost-aware. solve runs the
// independent checker on every result.

const (
	zoneA, zoneB, zoneC = "test-zone-a", "test-zone-b", "test-zone-c"
)

// zonePriced is a catalogue whose zones differ in price: z-<n> has n vCPU and
// 2n GiB, on-demand in zone a at 0.03 per vCPU, b at 0.02, c at 0.01.
func zonePriced() []*cloudprovider.InstanceType {
	var out []*cloudprovider.InstanceType
	for _, vcpu := range []int64{2, 4, 8, 16} {
		var ofs cloudprovider.Offerings
		for i, z := range []string{zoneA, zoneB, zoneC} {
			ofs = append(ofs, cloudprovider.Offering{Zone: z, CapacityType: v1alpha1.CapacityTypeOnDemand, Price: float64(vcpu) * 0.01 * float64(3-i), Available: true})
		}
		out = append(out, schedulertest.NewInstanceType(fmt.Sprintf("z-%d", vcpu), vcpu, 2*vcpu<<30, 32, ofs))
	}
	return out
}

func zonePricedSnapshot(ps []*corev1.Pod, pools ...*v1alpha1.NodePool) *scheduler.Snapshot {
	if len(pools) == 0 {
		pools = []*v1alpha1.NodePool{pool("default")}
	}
	s := &scheduler.Snapshot{Pods: ps, NodePools: pools, InstanceTypes: map[string][]*cloudprovider.InstanceType{}}
	for _, np := range pools {
		s.InstanceTypes[np.Name] = zonePriced()
	}
	return s
}

func zoneIs(values ...string) corev1.NodeSelectorRequirement {
	return expr(zoneKey, corev1.NodeSelectorOpIn, values...)
}

// launchZones lists, sorted, the zones any claim of the decision may launch in.
func launchZones(s *scheduler.Snapshot, r *scheduler.Results) []string {
	var out []string
	for _, nc := range r.NewNodeClaims {
		for _, l := range launches(s, nc) {
			if !slices.Contains(out, l[zoneKey]) {
				out = append(out, l[zoneKey])
			}
		}
	}
	slices.Sort(out)
	return out
}

func preferNoScheduleTaint(np *v1alpha1.NodePool) {
	np.Spec.Template.Spec.Taints = append(np.Spec.Template.Spec.Taints, corev1.Taint{Key: "spare", Effect: corev1.TaintEffectPreferNoSchedule})
}

func weighted(w int32) func(*v1alpha1.NodePool) {
	return func(np *v1alpha1.NodePool) { np.Spec.Weight = &w }
}

// poolsOf counts the decision's claims by pool.
func poolsOf(r *scheduler.Results) map[string]int {
	out := map[string]int{}
	for _, nc := range r.NewNodeClaims {
		out[nc.NodePool]++
	}
	return out
}

type preferenceCase struct {
	name   string
	snap   func() *scheduler.Snapshot
	policy scheduler.PreferencePolicy
	check  func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results)
}

func TestPreferencePolicies(t *testing.T) {
	for _, tc := range slices.Concat(respectCases(), ignoreAndCostAwareCases()) {
		t.Run(string(tc.policy)+": "+tc.name, func(t *testing.T) {
			s := tc.snap()
			r := solve(t, s, scheduler.Options{Preferences: tc.policy})
			requireAllPlaced(t, s, r)
			tc.check(t, s, r)
		})
	}
}

// inZones wants every launch of the decision in exactly these zones.
func inZones(zones ...string) func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
	return func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
		t.Helper()
		if got := launchZones(s, r); !slices.Equal(got, zones) {
			t.Errorf("claims may launch in %v, want %v", got, zones)
		}
	}
}

// onePricedIn wants one claim, priced in zone z and free to launch there.
func onePricedIn(z string) func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
	return func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
		t.Helper()
		if len(r.NewNodeClaims) != 1 || r.NewNodeClaims[0].Offering.Zone != z || !slices.Contains(launchZones(s, r), z) {
			t.Errorf("%d claims, the first priced in %s, want one claim priced in %s", len(r.NewNodeClaims), r.NewNodeClaims[0].Offering.Zone, z)
		}
	}
}

func respectCases() []preferenceCase {
	respect := scheduler.PreferencesRespect
	eitherAOrC := requireNode([]corev1.NodeSelectorRequirement{zoneIs(zoneA)}, []corev1.NodeSelectorRequirement{zoneIs(zoneC)})
	return []preferenceCase{
		{name: "step 1: only the first required term holds, even beside a node that meets the second", policy: respect,
			snap: func() *scheduler.Snapshot {
				s := zonePricedSnapshot(pods(2, "web", "1", "1Gi", eitherAOrC))
				s.Nodes = []*scheduler.StateNode{existingNode("node-c", zoneC, "16")}
				return s
			},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				inZones(zoneA)(t, s, r)
				if len(r.Existing) != 0 {
					t.Errorf("%d pods on node-c, in the second term's zone", len(r.Existing))
				}
			}},
		{name: "step 1: the next required term holds when the first cannot", policy: respect,
			snap: func() *scheduler.Snapshot {
				return zonePricedSnapshot(pods(2, "web", "1", "1Gi", eitherAOrC), pool("default", require(zoneKey, "In", zoneB, zoneC)))
			}, check: inZones(zoneC)},
		{name: "step 1: required terms are shed before any preference", policy: respect,
			snap: func() *scheduler.Snapshot {
				return zonePricedSnapshot(pods(2, "web", "1", "1Gi", eitherAOrC, preferNode(100, zoneIs(zoneC))))
			}, check: inZones(zoneC)},
		{name: "step 2: preferred pod affinity is shed before anti-affinity, whatever the weights", policy: respect,
			snap: func() *scheduler.Snapshot {
				s := zonePricedSnapshot(pods(2, "web", "1", "1Gi", podAffinity(false, 100, hostKey, "cache"), podAffinity(true, 1, hostKey, "cache")))
				s.Nodes = []*scheduler.StateNode{existingNode("node-x", zoneA, "16", pods(1, "cache", "1", "1Gi")...)}
				return s
			},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				if len(r.Existing) != 0 {
					t.Errorf("%d web pods joined the cache pod's node: the anti-affinity (weight 1) outlives the affinity (weight 100)", len(r.Existing))
				}
			}},
		{name: "step 3: preferred anti-affinity is shed heaviest first", policy: respect,
			snap: func() *scheduler.Snapshot {
				return zonePricedSnapshot(pods(4, "web", "250m", "256Mi", podAffinity(true, 10, zoneKey, "web"), podAffinity(true, 1, hostKey, "web")))
			},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				if len(r.NewNodeClaims) != 4 {
					t.Errorf("%d claims, want 4: the hostname anti-affinity (weight 1) holds once the zone one (weight 10) is shed", len(r.NewNodeClaims))
				}
			}},
		{name: "step 4: only the heaviest preferred node-affinity term holds", policy: respect,
			snap: func() *scheduler.Snapshot {
				return zonePricedSnapshot(pods(2, "web", "1", "1Gi", preferNode(50, zoneIs(zoneA, zoneB)), preferNode(10, zoneIs(zoneA))))
			}, check: inZones(zoneA, zoneB)},
		{name: "step 4: the next heaviest holds when the heaviest cannot", policy: respect,
			snap: func() *scheduler.Snapshot {
				return zonePricedSnapshot(pods(2, "web", "1", "1Gi", preferNode(50, zoneIs(zoneA)), preferNode(10, zoneIs(zoneB))),
					pool("default", require(zoneKey, "In", zoneB, zoneC)))
			}, check: inZones(zoneB)},
		{name: "step 5: ScheduleAnyway spreads are shed after node affinity", policy: respect,
			snap: func() *scheduler.Snapshot {
				return zonePricedSnapshot(pods(3, "web", "1", "1Gi", preferNode(100, zoneIs(zoneA)), spreadBy(zoneKey, 1, corev1.ScheduleAnyway)))
			},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				if got := countBy(s, r, "web", zoneKey); got[zoneA] != 1 || got[zoneB] != 1 || got[zoneC] != 1 {
					t.Errorf("web pods by zone %v, want one in each: the spread outlives the zone preference", got)
				}
			}},
		{name: "step 6: PreferNoSchedule taints block while another pool can take the pod", policy: respect,
			snap: func() *scheduler.Snapshot {
				return zonePricedSnapshot(pods(2, "web", "1", "1Gi"), pool("spare", weighted(10), preferNoScheduleTaint), pool("plain"))
			},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				if got := poolsOf(r); got["plain"] != len(r.NewNodeClaims) {
					t.Errorf("claims by pool %v, want all in plain", got)
				}
			}},
		{name: "step 6: PreferNoSchedule taints are tolerated last, after node affinity is shed", policy: respect,
			snap: func() *scheduler.Snapshot {
				return zonePricedSnapshot(pods(2, "web", "1", "1Gi", preferNode(100, zoneIs(zoneA))), pool("spare", preferNoScheduleTaint))
			},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				inZones(zoneA, zoneB, zoneC)(t, s, r)
				if got := poolsOf(r); got["spare"] != len(r.NewNodeClaims) {
					t.Errorf("claims by pool %v, want all in spare", got)
				}
			}},
	}
}

func ignoreAndCostAwareCases() []preferenceCase {
	ignore, costAware := scheduler.PreferencesIgnore, scheduler.PreferencesCostAware
	eitherAOrC := requireNode([]corev1.NodeSelectorRequirement{zoneIs(zoneA)}, []corev1.NodeSelectorRequirement{zoneIs(zoneC)})
	return []preferenceCase{
		{name: "required terms are the OR they are: a node that meets the second is used", policy: ignore,
			snap: func() *scheduler.Snapshot {
				s := zonePricedSnapshot(pods(2, "web", "1", "1Gi", eitherAOrC))
				s.Nodes = []*scheduler.StateNode{existingNode("node-c", zoneC, "16")}
				return s
			},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				if len(r.Existing) != 2 {
					t.Errorf("%d pods on node-c, want 2 (respect would hold the first term, zone a)", len(r.Existing))
				}
			}},
		{name: "preferences are dropped", policy: ignore,
			snap: func() *scheduler.Snapshot {
				return zonePricedSnapshot(pods(3, "web", "1", "1Gi", preferNode(100, zoneIs(zoneA)), spreadBy(zoneKey, 1, corev1.ScheduleAnyway)))
			}, check: onePricedIn(zoneC)},
		{name: "PreferNoSchedule taints do not block", policy: ignore,
			snap: func() *scheduler.Snapshot {
				return zonePricedSnapshot(pods(2, "web", "1", "1Gi"), pool("spare", weighted(10), preferNoScheduleTaint), pool("plain"))
			},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				if got := poolsOf(r); got["spare"] != len(r.NewNodeClaims) {
					t.Errorf("claims by pool %v, want all in spare, the heavier pool", got)
				}
			}},
		{name: "a preference that costs nothing more holds", policy: costAware,
			snap: func() *scheduler.Snapshot {
				return schedulertest.Snapshot(pods(3, "web", "1", "1Gi", preferNode(10, zoneIs("test-zone-3"))), schedulertest.C1())
			}, check: inZones("test-zone-3")},
		{name: "a preference that triples the price gives way", policy: costAware,
			snap: func() *scheduler.Snapshot {
				return zonePricedSnapshot(pods(3, "web", "1", "1Gi", preferNode(100, zoneIs(zoneA))))
			},
			check: onePricedIn(zoneC)},
		{name: "room already paid for beats a spread that needs new nodes", policy: costAware,
			snap: func() *scheduler.Snapshot {
				s := zonePricedSnapshot(pods(4, "web", "1", "1Gi", spreadBy(zoneKey, 1, corev1.ScheduleAnyway)))
				s.Nodes = []*scheduler.StateNode{existingNode("node-x", zoneA, "16")}
				return s
			},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				if len(r.Existing) != 4 || len(r.NewNodeClaims) != 0 {
					t.Errorf("%d pods on the existing node and %d claims, want 4 and 0", len(r.Existing), len(r.NewNodeClaims))
				}
			}},
		{name: "a spread that costs nothing more holds", policy: costAware,
			snap: func() *scheduler.Snapshot {
				return schedulertest.Snapshot(pods(3, "web", "250", "1Gi", spreadBy(zoneKey, 1, corev1.ScheduleAnyway)), schedulertest.C1())
			},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				if got := countBy(s, r, "web", zoneKey); len(got) != 3 {
					t.Errorf("web pods by zone %v, want one in each zone: each needs a node of its own anyway", got)
				}
			}},
	}
}

// policyOutcome is what one policy launched.
type policyOutcome struct {
	claims, mostPods int
	price            float64
}

func outcome(r *scheduler.Results) policyOutcome {
	o := policyOutcome{claims: len(r.NewNodeClaims), price: r.TotalPrice()}
	for _, nc := range r.NewNodeClaims {
		o.mostPods = max(o.mostPods, len(nc.Pods))
	}
	return o
}

// solveEach solves the snapshot under every policy, each result re-checked.
func solveEach(t *testing.T, s *scheduler.Snapshot) map[scheduler.PreferencePolicy]*scheduler.Results {
	out := map[scheduler.PreferencePolicy]*scheduler.Results{}
	for _, policy := range scheduler.PreferencePolicies {
		r := solve(t, s, scheduler.Options{Preferences: policy})
		requireAllPlaced(t, s, r)
		o := outcome(r)
		t.Logf("%-10s %4d claims, at most %3d pods on one, $%.4f/hour", policy, o.claims, o.mostPods, o.price)
		out[policy] = r
	}
	return out
}

// The web tier of examples/preferences/snapshot.yaml: 24 replicas asking to
// be spread over nodes (a ScheduleAnyway hostname spread and a preferred
// hostname anti-affinity) on the built-in catalogue.
func TestPreferencePoliciesOnTheWebSnapshot(t *testing.T) {
	f, err := os.Open("../../../examples/preferences/snapshot.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	objs, err := snapshotfile.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	s := objs.Snapshot(snapshotfile.Options{Infos: catalogue.Builtin(), Defaults: catalogue.DefaultOptions()})
	rs := solveEach(t, s)
	respect, ignore, costAware := outcome(rs[scheduler.PreferencesRespect]), outcome(rs[scheduler.PreferencesIgnore]), outcome(rs[scheduler.PreferencesCostAware])
	if respect.claims != len(s.Pods) || respect.mostPods != 1 {
		t.Errorf("respect launched %d claims with up to %d pods, want one per pod as Karpenter would", respect.claims, respect.mostPods)
	}
	if costAware.price > ignore.price*(1+scheduler.PreferenceCostTolerance)+1e-9 {
		t.Errorf("cost-aware costs $%.4f, over %.0f%% above ignore's $%.4f", costAware.price, 100*scheduler.PreferenceCostTolerance, ignore.price)
	}
	if costAware.mostPods >= ignore.mostPods || costAware.claims <= ignore.claims {
		t.Errorf("cost-aware puts up to %d pods on %d nodes, ignore %d on %d: the preferences should spread the pods further", costAware.mostPods, costAware.claims, ignore.mostPods, ignore.claims)
	}
}

// W3 (../shared/bench/WORKLOADS.md): respect must reach Karpenter's decision,
// 4,000 single-pod nodes in test-zone-1; cost-aware keeps the zone and
// spreads within the tolerance.
func TestPreferencePoliciesOnW3(t *testing.T) {
	s := schedulertest.Snapshot(schedulertest.W3(), schedulertest.C1())
	rs := solveEach(t, s)
	for _, policy := range []scheduler.PreferencePolicy{scheduler.PreferencesRespect, scheduler.PreferencesCostAware} {
		for _, nc := range rs[policy].NewNodeClaims {
			if z := nc.Requirements.Get(zoneKey).Values(); !slices.Equal(z, []string{"test-zone-1"}) {
				t.Errorf("%s: %s may launch in %v, want test-zone-1 only", policy, nc.Name, z)
				break
			}
		}
	}
	respect, ignore, costAware := outcome(rs[scheduler.PreferencesRespect]), outcome(rs[scheduler.PreferencesIgnore]), outcome(rs[scheduler.PreferencesCostAware])
	if respect.claims != 4000 || respect.mostPods != 1 {
		t.Errorf("respect launched %d claims with up to %d pods, want Karpenter's 4000 single-pod nodes", respect.claims, respect.mostPods)
	}
	if costAware.price > ignore.price*(1+scheduler.PreferenceCostTolerance)+1e-9 || costAware.mostPods >= ignore.mostPods {
		t.Errorf("cost-aware: $%.2f with up to %d pods a node; ignore: $%.2f with up to %d", costAware.price, costAware.mostPods, ignore.price, ignore.mostPods)
	}
}
