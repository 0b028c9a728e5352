package checker_test

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/provisioning/checker"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler/schedulertest"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

type claims = []*scheduler.NewNodeClaim

// one is a case with one pending pod on one new claim in zone z.
func one(p *corev1.Pod, z string, edit func(*scheduler.Snapshot)) func() (*scheduler.Snapshot, *scheduler.Results) {
	return func() (*scheduler.Snapshot, *scheduler.Results) {
		s := snapshot(pods{p})
		if edit != nil {
			edit(s)
		}
		return s, placed(claims{claim("n1", z, types{small}, p)})
	}
}

func taintPool(s *scheduler.Snapshot) {
	spec := &s.NodePools[0].Spec.Template.Spec
	spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
	spec.StartupTaints = []corev1.Taint{{Key: "cni-not-ready", Effect: corev1.TaintEffectNoSchedule}}
}

func labelCases() []checkCase {
	return []checkCase{
		{"nodeSelector matches the pinned zone", one(pod("a", "1", "1Gi", nodeSelector(zone, "z1")), "z1", nil), nil},
		{"nodeSelector on another zone", one(pod("a", "1", "1Gi", nodeSelector(zone, "z1")), "z2", nil), []C{checker.ConstraintNodeAffinity}},
		{"nodeSelector on an unpinned zone", one(pod("a", "1", "1Gi", nodeSelector(zone, "z1")), "", nil), []C{checker.ConstraintNodeAffinity}},
		{"pool template label satisfies nodeSelector", one(pod("a", "1", "1Gi", nodeSelector("team", "x")), "z1", func(s *scheduler.Snapshot) {
			s.NodePools[0].Spec.Template.ObjectMeta.Labels = map[string]string{"team": "x"}
		}), nil},
		{"zone nobody offers", one(pod("a", "1", "1Gi"), "z9", nil), []C{checker.ConstraintOffering}},
		{"listed type excluded by the claim", func() (*scheduler.Snapshot, *scheduler.Results) {
			p := pod("a", "1", "1Gi")
			c := claim("n1", "z1", types{small, big}, p)
			c.Requirements.Add(scheduling.NewRequirement(corev1.LabelInstanceTypeStable, v1alpha1.OperatorIn, "small"))
			return snapshot(pods{p}), placed(claims{c})
		}, []C{checker.ConstraintRequirements}},
		{"pool taint tolerated, startup taint ignored", one(pod("a", "1", "1Gi", tolerates("dedicated")), "z1", taintPool), nil},
		{"pool taint not tolerated", one(pod("a", "1", "1Gi"), "z1", taintPool), []C{checker.ConstraintTaints}},
		{"bound volume in the claim's zone", one(pod("a", "1", "1Gi", claimVolume("data")), "z1", func(s *scheduler.Snapshot) { zonalVolume(s, "data", "z1") }), nil},
		{"bound volume in another zone", one(pod("a", "1", "1Gi", claimVolume("data")), "z2", func(s *scheduler.Snapshot) { zonalVolume(s, "data", "z1") }), []C{checker.ConstraintVolumeTopology}},
	}
}

var web = map[string]string{"app": "web"}

// spreadPods are n pods labelled app=web spreading over key on app=web.
func spreadPods(key string, n int, opts ...podOpt) pods {
	var out pods
	for i := range n {
		out = append(out, pod(string(rune('a'+i)), "100m", "100Mi", append([]podOpt{labelled("app", "web"), spread(key, web)}, opts...)...))
	}
	return out
}

// zonal places pod i in a claim of its own in zones[i].
func zonal(p pods, zones ...string) func() (*scheduler.Snapshot, *scheduler.Results) {
	return func() (*scheduler.Snapshot, *scheduler.Results) {
		var cs claims
		for i, z := range zones {
			cs = append(cs, claim("n"+string(rune('1'+i)), z, types{small}, p[i]))
		}
		return snapshot(p), placed(cs)
	}
}

func minDomains(n int32) podOpt {
	return func(p *corev1.Pod) { p.Spec.TopologySpreadConstraints[0].MinDomains = &n }
}

// inZones requires the zones through required node affinity.
func inZones(zones ...string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: zone, Operator: corev1.NodeSelectorOpIn, Values: zones}}}}}}}
	}
}

func ignoreAffinityPolicy(p *corev1.Pod) {
	ignore := corev1.NodeInclusionPolicyIgnore
	p.Spec.TopologySpreadConstraints[0].NodeAffinityPolicy = &ignore
}

func spreadCases() []checkCase {
	return []checkCase{
		{"zone spread over the zones the pod's affinity allows", zonal(spreadPods(zone, 3, inZones("z1", "z2")), "z1", "z2", "z1"), nil},
		{"zone spread with a nodeSelector and no affinity", zonal(spreadPods(zone, 3, func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"team": "x"} }), "z1", "z2", "z3"),
			[]C{checker.ConstraintNodeAffinity}},
		{"zone spread checked in the decision's order", zonal(spreadPods(zone, 3, inZones("z1", "z2")), "z1", "z1", "z2"), []C{checker.ConstraintTopologySpread}},
		{"a matching pod placed after the spread owners may unbalance zones", func() (*scheduler.Snapshot, *scheduler.Results) {
			p, late := spreadPods(zone, 3), pod("late", "100m", "100Mi", labelled("app", "web"))
			return snapshot(append(p, late)), placed(claims{claim("n1", "z1", types{big}, p[0], late), claim("n2", "z2", types{small}, p[1]), claim("n3", "z3", types{small}, p[2])})
		}, nil},
		{"a matching pod placed before a spread owner counts against it", func() (*scheduler.Snapshot, *scheduler.Results) {
			p, early := spreadPods(zone, 1), pod("early", "100m", "100Mi", labelled("app", "web"))
			r := placed(claims{claim("n1", "z1", types{big}, p[0], early)})
			r.Order = pods{early, p[0]}
			return snapshot(pods{p[0], early}), r
		}, []C{checker.ConstraintTopologySpread}},
		{"placed pod missing from the order", func() (*scheduler.Snapshot, *scheduler.Results) {
			a := pod("a", "100m", "100Mi")
			r := placed(claims{claim("n1", "z1", types{small}, a)})
			r.Order = nil
			return snapshot(pods{a}), r
		}, []C{checker.ConstraintPlacement}},
		{"zone spread with nodeAffinityPolicy Ignore counts every zone", zonal(spreadPods(zone, 3, inZones("z1", "z2"), ignoreAffinityPolicy), "z1", "z1", "z2"), []C{checker.ConstraintTopologySpread}},
		{"zone spread balanced", zonal(spreadPods(zone, 3), "z1", "z2", "z3"), nil},
		{"zone spread counts the empty zone the pool offers", zonal(spreadPods(zone, 3), "z1", "z1", "z2"), []C{checker.ConstraintTopologySpread}},
		{"zone spread within skew", zonal(spreadPods(zone, 4), "z1", "z2", "z3", "z1"), nil},
		{"zone spread with too few domains for minDomains", zonal(spreadPods(zone, 4, minDomains(4)), "z1", "z2", "z3", "z1"), []C{checker.ConstraintTopologySpread}},
		{"zone spread on an unpinned claim", zonal(spreadPods(zone, 1), ""), []C{checker.ConstraintTopologySpread}},
		{"hostname spread one per node", zonal(spreadPods(host, 2), "z1", "z1"), nil},
		{"hostname spread two on one node", func() (*scheduler.Snapshot, *scheduler.Results) {
			p, other := spreadPods(host, 2), pod("x", "1m", "1Mi")
			return snapshot(append(p, other)), placed(claims{claim("n1", "z1", types{big}, p...), claim("n2", "z1", types{small}, other)})
		}, []C{checker.ConstraintTopologySpread}},
	}
}

func affine(name string) *corev1.Pod {
	return pod(name, "100m", "100Mi", labelled("grp", "g"), podAffinity(zone, map[string]string{"grp": "g"}))
}

func affinityCases() []checkCase {
	db := map[string]string{"app": "db"}
	follower := func() *corev1.Pod { return pod("f", "100m", "100Mi", podAffinity(zone, db)) }
	return []checkCase{
		{"self affinity in one zone", zonal(pods{affine("a"), affine("b"), affine("c")}, "z1", "z1", "z1"), nil},
		{"self affinity split across zones", zonal(pods{affine("a"), affine("b"), affine("c"), affine("d")}, "z1", "z1", "z2", "z2"), []C{checker.ConstraintPodAffinity}},
		{"affinity to an existing pod's zone", func() (*scheduler.Snapshot, *scheduler.Results) {
			f := follower()
			return snapshot(pods{f}, existing("e1", "z1", pod("db", "1", "1Gi", labelled("app", "db")))), placed(claims{claim("n1", "z1", types{small}, f)})
		}, nil},
		{"affinity away from the existing pod's zone", func() (*scheduler.Snapshot, *scheduler.Results) {
			f := follower()
			return snapshot(pods{f}, existing("e1", "z1", pod("db", "1", "1Gi", labelled("app", "db")))), placed(claims{claim("n1", "z2", types{small}, f)})
		}, []C{checker.ConstraintPodAffinity}},
		{"anti-affinity on separate hosts", func() (*scheduler.Snapshot, *scheduler.Results) {
			a, b := pod("a", "1", "1Gi", labelled("app", "web"), antiAffinity(host, web)), pod("b", "1", "1Gi", labelled("app", "web"), antiAffinity(host, web))
			return snapshot(pods{a, b}), placed(claims{claim("n1", "z1", types{small}, a), claim("n2", "z1", types{small}, b)})
		}, nil},
		{"anti-affinity on one host", func() (*scheduler.Snapshot, *scheduler.Results) {
			a, b := pod("a", "100m", "1Gi", labelled("app", "web"), antiAffinity(host, web)), pod("b", "100m", "1Gi", labelled("app", "web"), antiAffinity(host, web))
			return snapshot(pods{a, b}), placed(claims{claim("n1", "z1", types{small}, a, b)})
		}, []C{checker.ConstraintPodAntiAffinity}},
		{"existing pod's anti-affinity", func() (*scheduler.Snapshot, *scheduler.Results) {
			guard, b := pod("guard", "100m", "100Mi", antiAffinity(zone, web)), pod("b", "100m", "100Mi", labelled("app", "web"))
			return snapshot(pods{b}, existing("e1", "z1", guard)), placed(nil, scheduler.Placement{Pod: b, Node: "e1"})
		}, []C{checker.ConstraintPodAntiAffinity}},
	}
}

func limitPool(cpu string) func(*scheduler.Snapshot) {
	return func(s *scheduler.Snapshot) {
		s.NodePools[0].Spec.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	}
}

func nodeLevelCases() []checkCase {
	return []checkCase{
		{"host ports differ", func() (*scheduler.Snapshot, *scheduler.Results) {
			a, b := pod("a", "100m", "100Mi", hostPort(80)), pod("b", "100m", "100Mi", hostPort(443))
			return snapshot(pods{a, b}), placed(claims{claim("n1", "z1", types{small}, a, b)})
		}, nil},
		{"host ports collide", func() (*scheduler.Snapshot, *scheduler.Results) {
			a, b := pod("a", "100m", "100Mi", hostPort(80)), pod("b", "100m", "100Mi", hostPort(80))
			return snapshot(pods{a, b}), placed(claims{claim("n1", "z1", types{small}, a, b)})
		}, []C{checker.ConstraintHostPorts}},
		// existing node 4 CPU + claim's largest type (big, 8) = 12.
		{"limits hold at the largest type", func() (*scheduler.Snapshot, *scheduler.Results) {
			a := pod("a", "100m", "100Mi")
			s := snapshot(pods{a}, existing("e1", "z1"))
			limitPool("12")(s)
			return s, placed(claims{claim("n1", "z1", types{small, big}, a)})
		}, nil},
		{"limits exceeded by a fallback type", func() (*scheduler.Snapshot, *scheduler.Results) {
			a := pod("a", "100m", "100Mi")
			s := snapshot(pods{a}, existing("e1", "z1"))
			limitPool("11")(s)
			return s, placed(claims{claim("n1", "z1", types{small, big}, a)})
		}, []C{checker.ConstraintLimits}},
		// in-flight claim not launched: its largest type (big, 8) + new claim (small, 2) = 10 > 9,
		// though its requests (1) + 2 would fit.
		{"an in-flight claim counts at its largest type until it launches", func() (*scheduler.Snapshot, *scheduler.Results) {
			a := pod("a", "100m", "100Mi")
			s := snapshot(pods{a}, inflight(nil))
			limitPool("9")(s)
			return s, placed(claims{claim("n1", "z1", types{small}, a)})
		}, []C{checker.ConstraintLimits}},
		{"an in-flight claim counts at its largest type: within the limit", func() (*scheduler.Snapshot, *scheduler.Results) {
			a := pod("a", "100m", "100Mi")
			s := snapshot(pods{a}, inflight(nil))
			limitPool("10")(s)
			return s, placed(claims{claim("n1", "z1", types{small}, a)})
		}, nil},
		// launched as small: 2 + 2 = 4.
		{"a launched in-flight claim counts at its capacity", func() (*scheduler.Snapshot, *scheduler.Results) {
			a := pod("a", "100m", "100Mi")
			s := snapshot(pods{a}, inflight(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}))
			limitPool("9")(s)
			return s, placed(claims{claim("n1", "z1", types{small}, a)})
		}, nil},
	}
}

// inflight is a NodeClaim of the default pool allowed small or big, asking
// 1 CPU; capacity is set once it has launched.
func inflight(capacity corev1.ResourceList) *scheduler.StateNode {
	nc := &v1alpha1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "inflight", Labels: map[string]string{v1alpha1.LabelNodePool: schedulertest.DefaultPoolName}},
		Spec: v1alpha1.NodeClaimSpec{
			Requirements: []v1alpha1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelInstanceTypeStable, Operator: v1alpha1.OperatorIn, Values: []string{"small", "big"}}},
			Resources:    v1alpha1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
		},
		Status: v1alpha1.NodeClaimStatus{Capacity: capacity},
	}
	return &scheduler.StateNode{NodeClaim: nc}
}
