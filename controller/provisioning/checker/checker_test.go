package checker_test

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning/checker"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

type (
	types = []*cloudprovider.InstanceType
	pods  = []*corev1.Pod
	C     = checker.Constraint
)

// placed is a Results with the given claims and placements on existing nodes,
// placed in that order: existing placements first, then each claim's pods.
func placed(claims []*scheduler.NewNodeClaim, existing ...scheduler.Placement) *scheduler.Results {
	r := &scheduler.Results{NewNodeClaims: claims, Existing: existing}
	for _, pl := range existing {
		r.Order = append(r.Order, pl.Pod)
	}
	for _, nc := range claims {
		r.Order = append(r.Order, nc.Pods...)
	}
	return r
}

type checkCase struct {
	name string
	// build returns the snapshot and the decision to check.
	build func() (*scheduler.Snapshot, *scheduler.Results)
	// want are the constraints the violations must name, exactly; none for a passing case.
	want []C
}

func TestCheck(t *testing.T) {
	cases := slices.Concat(accountingCases(), resourceCases(), labelCases(), spreadCases(), affinityCases(), nodeLevelCases())
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, r := tc.build()
			vs := checker.Check(s, r)
			var got []C
			for _, v := range vs {
				if !slices.Contains(got, v.Constraint) {
					got = append(got, v.Constraint)
				}
				t.Log(v)
			}
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("constraints violated = %v, want %v; violations: %v", got, want, vs)
			}
			for _, v := range vs {
				if v.Message == "" || (v.Pod == "" && v.Node == "") {
					t.Errorf("violation does not name its pod or node, or has no message: %v", v)
				}
			}
		})
	}
}

func accountingCases() []checkCase {
	a, b := pod("a", "100m", "100Mi"), pod("b", "100m", "100Mi")
	return []checkCase{
		{"every pod once", func() (*scheduler.Snapshot, *scheduler.Results) {
			r := placed([]*scheduler.NewNodeClaim{claim("n1", "z1", types{small}, a)})
			r.Unschedulable = []scheduler.Unschedulable{{Pod: b, Reason: "test"}}
			return snapshot(pods{a, b}), r
		}, nil},
		{"pod missing", func() (*scheduler.Snapshot, *scheduler.Results) {
			return snapshot(pods{a, b}), placed([]*scheduler.NewNodeClaim{claim("n1", "z1", types{small}, a)})
		}, []C{checker.ConstraintPlacement}},
		{"pod twice", func() (*scheduler.Snapshot, *scheduler.Results) {
			return snapshot(pods{a}), placed([]*scheduler.NewNodeClaim{claim("n1", "z1", types{small}, a), claim("n2", "z1", types{small}, a)})
		}, []C{checker.ConstraintPlacement}},
		{"placed on a node marked for deletion", func() (*scheduler.Snapshot, *scheduler.Results) {
			n := existing("e1", "z1")
			n.MarkedForDeletion = true
			return snapshot(pods{a}, n), placed(nil, scheduler.Placement{Pod: a, Node: "e1"})
		}, []C{checker.ConstraintPlacement}},
	}
}

func resourceCases() []checkCase {
	fits := func() pods { return pods{pod("a", "900m", "1Gi"), pod("b", "900m", "1Gi")} }
	return []checkCase{
		{"pods fit every listed type", func() (*scheduler.Snapshot, *scheduler.Results) {
			p := fits()
			return snapshot(p), placed([]*scheduler.NewNodeClaim{claim("n1", "z1", types{small, big}, p...)})
		}, nil},
		{"pods exceed a fallback type", func() (*scheduler.Snapshot, *scheduler.Results) {
			p := pods{pod("a", "1500m", "1Gi"), pod("b", "1500m", "1Gi")}
			return snapshot(p), placed([]*scheduler.NewNodeClaim{claim("n1", "z1", types{big, small}, p...)})
		}, []C{checker.ConstraintResources}},
		{"sidecar and overhead count", func() (*scheduler.Snapshot, *scheduler.Results) {
			p := pod("a", "1", "1Gi")
			always := corev1.ContainerRestartPolicyAlways
			p.Spec.InitContainers = []corev1.Container{{Name: "side", RestartPolicy: &always, Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("800m")}}}}
			p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}
			return snapshot(pods{p}), placed([]*scheduler.NewNodeClaim{claim("n1", "z1", types{small}, p)})
		}, []C{checker.ConstraintResources}},
		{"too many pods", func() (*scheduler.Snapshot, *scheduler.Results) {
			p := pods{pod("a", "1m", "1Mi"), pod("b", "1m", "1Mi"), pod("c", "1m", "1Mi"), pod("d", "1m", "1Mi"), pod("e", "1m", "1Mi")}
			return snapshot(p), placed([]*scheduler.NewNodeClaim{claim("n1", "z1", types{small}, p...)})
		}, []C{checker.ConstraintResources}},
		{"daemonset lands and overflows", func() (*scheduler.Snapshot, *scheduler.Results) {
			p := fits()
			s := snapshot(p)
			s.DaemonSets = append(s.DaemonSets, daemonSet("200m", nil))
			return s, placed([]*scheduler.NewNodeClaim{claim("n1", "z1", types{small}, p...)})
		}, []C{checker.ConstraintResources}},
		{"daemonset selecting other nodes does not count", func() (*scheduler.Snapshot, *scheduler.Results) {
			p := fits()
			s := snapshot(p)
			s.DaemonSets = append(s.DaemonSets, daemonSet("200m", map[string]string{zone: "z2"}))
			return s, placed([]*scheduler.NewNodeClaim{claim("n1", "z1", types{small}, p...)})
		}, nil},
		{"existing node has room", func() (*scheduler.Snapshot, *scheduler.Results) {
			a, b := pod("a", "2", "1Gi"), pod("b", "1", "1Gi")
			return snapshot(pods{b}, existing("e1", "z1", a)), placed(nil, scheduler.Placement{Pod: b, Node: "e1"})
		}, nil},
		{"existing node overflows", func() (*scheduler.Snapshot, *scheduler.Results) {
			a, b := pod("a", "3", "1Gi"), pod("b", "1500m", "1Gi")
			return snapshot(pods{b}, existing("e1", "z1", a)), placed(nil, scheduler.Placement{Pod: b, Node: "e1"})
		}, []C{checker.ConstraintResources}},
	}
}
