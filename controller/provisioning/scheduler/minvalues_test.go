package scheduler_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler/schedulertest"
)

// ladder is four types of 2, 4, 8 and 16 vCPU (allocatable 100m less, per the
// schedulertest overhead) and 4 GiB per vCPU. Each step up costs less than a new
// a-2, so a claim grows rather than splits when nothing stops it.
func ladder() []*cloudprovider.InstanceType {
	var out []*cloudprovider.InstanceType
	for _, t := range []struct {
		vcpu  int64
		price float64
	}{{2, 0.10}, {4, 0.15}, {8, 0.20}, {16, 0.25}} {
		ofs := cloudprovider.Offerings{{Zone: "test-zone-1", CapacityType: v1alpha1.CapacityTypeOnDemand, Price: t.price, Available: true}}
		out = append(out, schedulertest.NewInstanceType(fmt.Sprintf("a-%d", t.vcpu), t.vcpu, 4*t.vcpu<<30, 110, ofs))
	}
	return out
}

// requireMin adds a requirement with minValues to a pool.
func requireMin(key, op string, minValues int, values ...string) func(*v1alpha1.NodePool) {
	return func(np *v1alpha1.NodePool) {
		np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements,
			v1alpha1.NodeSelectorRequirementWithMinValues{Key: key, Operator: op, Values: values, MinValues: ptr.To(minValues)})
	}
}

// ladderSnapshot is the pods on the default pool, offering the ladder, with the pool edited.
func ladderSnapshot(ps []*corev1.Pod, edit ...func(*v1alpha1.NodePool)) *scheduler.Snapshot {
	s := schedulertest.Snapshot(ps, ladder())
	for _, e := range edit {
		e(s.NodePools[0])
	}
	return s
}

func typeNames(nc *scheduler.NewNodeClaim) []string {
	var out []string
	for _, it := range nc.InstanceTypes {
		out = append(out, it.Name)
	}
	return out
}

func TestMinValuesOnInstanceTypes(t *testing.T) {
	instanceType := corev1.LabelInstanceTypeStable
	for _, tc := range []struct {
		name      string
		policy    scheduler.MinValuesPolicy
		minValues int
		cpu       string
		// the claim's instance types, or nil for no claim and the pod unschedulable
		want []string
	}{
		// 3 CPU fits a-4 (3900m), a-8 and a-16: three types remain.
		{"strict, exactly enough types fit", scheduler.MinValuesStrict, 3, "3", []string{"a-4", "a-8", "a-16"}},
		{"strict, more than enough", scheduler.MinValuesStrict, 2, "3", []string{"a-4", "a-8", "a-16"}},
		// 5 CPU fits only a-8 and a-16.
		{"strict, too few types fit", scheduler.MinValuesStrict, 3, "5", nil},
		{"strict is the default policy", "", 3, "5", nil},
		{"strict, a pod larger than minValues allows", scheduler.MinValuesStrict, 4, "1.95", nil}, // a-2 has 1900m
		{"strict, four of four", scheduler.MinValuesStrict, 4, "1.9", []string{"a-2", "a-4", "a-8", "a-16"}},
		{"best effort makes the claim anyway", scheduler.MinValuesBestEffort, 3, "5", []string{"a-8", "a-16"}},
		{"best effort with one type left", scheduler.MinValuesBestEffort, 4, "9", []string{"a-16"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ladderSnapshot(pods(1, "app", tc.cpu, "1Gi"), requireMin(instanceType, v1alpha1.OperatorExists, tc.minValues))
			r := solve(t, s, scheduler.Options{MinValuesPolicy: tc.policy})
			if tc.want == nil {
				if len(r.NewNodeClaims) != 0 || len(r.Unschedulable) != 1 {
					t.Fatalf("claims %d, unschedulable %+v; want no claim and the pod unschedulable", len(r.NewNodeClaims), r.Unschedulable)
				}
				reason := r.Unschedulable[0].Reason
				want := fmt.Sprintf("minValues %d", tc.minValues)
				if !strings.Contains(reason, "nodepool default") || !strings.Contains(reason, want) || !strings.Contains(reason, instanceType) {
					t.Errorf("reason %q should name the pool, %q and the key %s", reason, want, instanceType)
				}
				return
			}
			if len(r.NewNodeClaims) != 1 || len(r.Unschedulable) != 0 {
				t.Fatalf("claims %d, unschedulable %+v; want one claim", len(r.NewNodeClaims), r.Unschedulable)
			}
			if got := typeNames(r.NewNodeClaims[0]); !slices.Equal(got, tc.want) {
				t.Errorf("claim lists %v, want %v", got, tc.want)
			}
		})
	}
}

// TestMinValuesBoundsHowFarAClaimGrows: under Strict, a claim stops growing
// while fewer than minValues types would still hold its pods; under BestEffort
// it grows to the cheapest packing.
func TestMinValuesBoundsHowFarAClaimGrows(t *testing.T) {
	build := func() *scheduler.Snapshot {
		return ladderSnapshot(pods(10, "app", "1", "1Gi"), requireMin(corev1.LabelInstanceTypeStable, v1alpha1.OperatorExists, 3))
	}
	strict := solve(t, build(), scheduler.Options{MinValuesPolicy: scheduler.MinValuesStrict})
	if strict.PodCount() != 10 {
		t.Fatalf("strict placed %d of 10 pods: %+v", strict.PodCount(), strict.Unschedulable)
	}
	for _, nc := range strict.NewNodeClaims {
		// Three types must still fit, so a claim is at most a-4: 3 pods of 1 CPU in 3900m.
		if len(nc.InstanceTypes) < 3 || len(nc.Pods) > 3 {
			t.Errorf("strict claim %s: %d pods on %v; want at most 3 pods and at least 3 types", nc.Name, len(nc.Pods), typeNames(nc))
		}
	}
	if len(strict.NewNodeClaims) < 4 {
		t.Errorf("strict made %d claims; 10 pods at 3 per claim need at least 4", len(strict.NewNodeClaims))
	}
	best := solve(t, build(), scheduler.Options{MinValuesPolicy: scheduler.MinValuesBestEffort})
	if best.PodCount() != 10 {
		t.Fatalf("best effort placed %d of 10 pods: %+v", best.PodCount(), best.Unschedulable)
	}
	// a-16 ($0.25, 15900m) holds all ten and is the cheapest packing.
	if len(best.NewNodeClaims) != 1 || !slices.Equal(typeNames(best.NewNodeClaims[0]), []string{"a-16"}) {
		for _, nc := range best.NewNodeClaims {
			t.Logf("%s: %d pods on %v", nc.Name, len(nc.Pods), typeNames(nc))
		}
		t.Errorf("best effort made %d claims; want one a-16 holding every pod", len(best.NewNodeClaims))
	}
	if best.TotalPrice() >= strict.TotalPrice() {
		t.Errorf("best effort costs $%.2f, strict $%.2f; minValues should cost something here", best.TotalPrice(), strict.TotalPrice())
	}
}

// TestMinValuesHoldsAfterTheListIsCut: the claim's list is cut to
// MaxInstanceTypes and to the pool's limits; under Strict the cut list must still
// have minValues types.
func TestMinValuesHoldsAfterTheListIsCut(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts scheduler.Options
		edit func(*v1alpha1.NodePool)
	}{
		{"MaxInstanceTypes below minValues", scheduler.Options{MaxInstanceTypes: 2}, func(*v1alpha1.NodePool) {}},
		{"a cpu limit that leaves two types", scheduler.Options{}, func(np *v1alpha1.NodePool) {
			np.Spec.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("6")} // a-2 and a-4 only
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ladderSnapshot(pods(1, "app", "1", "1Gi"), requireMin(corev1.LabelInstanceTypeStable, v1alpha1.OperatorExists, 3), tc.edit)
			r := solve(t, s, tc.opts)
			for _, nc := range r.NewNodeClaims {
				if len(nc.InstanceTypes) < 3 {
					t.Errorf("strict claim %s lists %v, fewer than minValues 3", nc.Name, typeNames(nc))
				}
			}
			if len(r.NewNodeClaims) == 0 && (len(r.Unschedulable) != 1 || !strings.Contains(r.Unschedulable[0].Reason, "minValues 3")) {
				t.Errorf("no claim; the reason %+v should name minValues 3", r.Unschedulable)
			}
		})
	}
}

// families counts the distinct catalogue families of a claim's types.
func families(t *testing.T, nc *scheduler.NewNodeClaim) []string {
	t.Helper()
	byName := map[string]string{}
	for _, info := range catalogue.Builtin() {
		byName[info.Name] = info.Family
	}
	var out []string
	for _, it := range nc.InstanceTypes {
		if f := byName[it.Name]; !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}

func TestMinValuesOnFamiliesWithTheCatalogue(t *testing.T) {
	family := v1alpha1.LabelInstanceFamily
	mem := map[string]string{
		"small": "2Gi",
		// c6i tops out at 256 GiB and m6i.32xlarge at 512 GiB less 7.5% and
		// reservations; only r6i.24xlarge and up (768 GiB) hold 500 GiB.
		"r6i only": "500Gi",
	}
	for _, tc := range []struct {
		name   string
		policy scheduler.MinValuesPolicy
		size   string
		want   []string // families on the claim; nil for unschedulable
	}{
		{"strict, every family fits", scheduler.MinValuesStrict, "small", []string{"c6i", "m6i", "r6i"}},
		{"strict, one family fits", scheduler.MinValuesStrict, "r6i only", nil},
		{"best effort, one family fits", scheduler.MinValuesBestEffort, "r6i only", []string{"r6i"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			np := pool("default", requireMin(family, v1alpha1.OperatorIn, 3, "c6i", "m6i", "r6i"), require(v1alpha1.LabelCapacityType, "In", "on-demand"))
			r := solve(t, snapshot(pods(2, "app", "1", mem[tc.size]), np), scheduler.Options{MinValuesPolicy: tc.policy})
			if tc.want == nil {
				if len(r.NewNodeClaims) != 0 || len(r.Unschedulable) != 2 {
					t.Fatalf("claims %d, unschedulable %d; want none and both pods unschedulable", len(r.NewNodeClaims), len(r.Unschedulable))
				}
				for _, u := range r.Unschedulable {
					if !strings.Contains(u.Reason, "minValues 3") || !strings.Contains(u.Reason, family) {
						t.Errorf("reason %q should name minValues 3 of %s", u.Reason, family)
					}
				}
				return
			}
			if len(r.NewNodeClaims) == 0 || len(r.Unschedulable) != 0 {
				t.Fatalf("claims %d, unschedulable %+v; want the pods placed", len(r.NewNodeClaims), r.Unschedulable)
			}
			for _, nc := range r.NewNodeClaims {
				if got := families(t, nc); !slices.Equal(got, tc.want) {
					t.Errorf("%s lists families %v (%v), want %v", nc.Name, got, typeNames(nc), tc.want)
				}
			}
		})
	}
}
