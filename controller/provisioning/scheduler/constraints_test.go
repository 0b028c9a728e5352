package scheduler_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler/schedulertest"
)

// This file covers the pod constraints kind by kind: node selection with every
// operator, topology spread on every key and option, pod (anti-)affinity against
// pending and running pods, requests and capacity-type order (preferences are
// in preferences_test.go). solve (solver_test.go) runs the independent checker
// on every result.

const (
	ctKey   = v1alpha1.LabelCapacityType
	hostKey = corev1.LabelHostname
)

var allZones = []string{"us-east-1a", "us-east-1b", "us-east-1c"}

func expr(key string, op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

func affinityOf(p *corev1.Pod) *corev1.Affinity {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &corev1.Affinity{}
	}
	return p.Spec.Affinity
}

// requireNode adds required node affinity with one term per argument (an OR).
func requireNode(terms ...[]corev1.NodeSelectorRequirement) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		a := affinityOf(p)
		if a.NodeAffinity == nil {
			a.NodeAffinity = &corev1.NodeAffinity{}
		}
		sel := &corev1.NodeSelector{}
		for _, t := range terms {
			sel.NodeSelectorTerms = append(sel.NodeSelectorTerms, corev1.NodeSelectorTerm{MatchExpressions: t})
		}
		a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = sel
	}
}

func preferNode(weight int32, exprs ...corev1.NodeSelectorRequirement) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		a := affinityOf(p)
		if a.NodeAffinity == nil {
			a.NodeAffinity = &corev1.NodeAffinity{}
		}
		a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
			corev1.PreferredSchedulingTerm{Weight: weight, Preference: corev1.NodeSelectorTerm{MatchExpressions: exprs}})
	}
}

func selectNode(key, value string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		if p.Spec.NodeSelector == nil {
			p.Spec.NodeSelector = map[string]string{}
		}
		p.Spec.NodeSelector[key] = value
	}
}

func withLabel(key, value string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Labels[key] = value }
}

func term(key, app string) corev1.PodAffinityTerm {
	return corev1.PodAffinityTerm{TopologyKey: key, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}
}

// podAffinity adds a pod (anti-)affinity term: required when weight is 0, else preferred.
func podAffinity(anti bool, weight int32, key, app string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		a := affinityOf(p)
		if anti {
			if a.PodAntiAffinity == nil {
				a.PodAntiAffinity = &corev1.PodAntiAffinity{}
			}
			if weight == 0 {
				a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, term(key, app))
			} else {
				a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
					corev1.WeightedPodAffinityTerm{Weight: weight, PodAffinityTerm: term(key, app)})
			}
			return
		}
		if a.PodAffinity == nil {
			a.PodAffinity = &corev1.PodAffinity{}
		}
		if weight == 0 {
			a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, term(key, app))
		} else {
			a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
				corev1.WeightedPodAffinityTerm{Weight: weight, PodAffinityTerm: term(key, app)})
		}
	}
}

// spreadBy adds a topology spread on the pod's app label, edited by the options.
func spreadBy(key string, skew int32, when corev1.UnsatisfiableConstraintAction, edit ...func(*corev1.TopologySpreadConstraint)) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		tsc := corev1.TopologySpreadConstraint{MaxSkew: skew, TopologyKey: key, WhenUnsatisfiable: when,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": p.Labels["app"]}}}
		for _, e := range edit {
			e(&tsc)
		}
		p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, tsc)
	}
}

func tolerate(key string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists})
	}
}

func request(name corev1.ResourceName, q string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.Containers[0].Resources.Requests[name] = resource.MustParse(q) }
}

func poolLabels(labels map[string]string) func(*v1alpha1.NodePool) {
	return func(np *v1alpha1.NodePool) { np.Spec.Template.ObjectMeta.Labels = labels }
}

func poolTaint(key string) func(*v1alpha1.NodePool) {
	return func(np *v1alpha1.NodePool) {
		np.Spec.Template.Spec.Taints = append(np.Spec.Template.Spec.Taints, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoSchedule})
	}
}

// running returns pods bound to node name (not pending).
func running(node string, ps []*corev1.Pod) []*corev1.Pod {
	for _, p := range ps {
		p.Spec.NodeName = node
		p.Status.Phase = corev1.PodRunning
	}
	return ps
}

// existingNode is a registered node in zone with the given cpu, 64Gi memory and bound pods.
func existingNode(name, zone, cpu string, bound ...*corev1.Pod) *scheduler.StateNode {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		zoneKey: zone, hostKey: name, ctKey: v1alpha1.CapacityTypeOnDemand, corev1.LabelArchStable: "amd64"}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu),
			corev1.ResourceMemory: resource.MustParse("64Gi"), corev1.ResourcePods: resource.MustParse("110")}}}
	n.Status.Capacity = n.Status.Allocatable
	return &scheduler.StateNode{Node: n, Pods: running(name, bound)}
}

// nodeLabels maps each node of the decision (existing nodes and new claims) to
// the labels it is sure to have: an existing node's own, a claim's pinned
// requirements, nodepool and hostname.
func nodeLabels(s *scheduler.Snapshot, r *scheduler.Results) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, sn := range s.Nodes {
		out[sn.Name()] = sn.Node.Labels
	}
	for _, nc := range r.NewNodeClaims {
		l := nc.Requirements.Labels()
		l[hostKey] = nc.Name
		out[nc.Name] = l
	}
	return out
}

// nodeOf maps each placed pod's name to its node's name.
func nodeOf(r *scheduler.Results) map[string]string {
	out := map[string]string{}
	for _, pl := range r.Existing {
		out[pl.Pod.Name] = pl.Node
	}
	for _, nc := range r.NewNodeClaims {
		for _, p := range nc.Pods {
			out[p.Name] = nc.Name
		}
	}
	return out
}

// countBy counts the placed pods whose name starts with prefix by their node's value of key.
func countBy(s *scheduler.Snapshot, r *scheduler.Results, prefix, key string) map[string]int {
	labels := nodeLabels(s, r)
	out := map[string]int{}
	for pod, node := range nodeOf(r) {
		if strings.HasPrefix(pod, prefix+"-") {
			out[labels[node][key]]++
		}
	}
	return out
}

// launches lists the labels of every node a claim's launch could produce: each
// listed type with each available offering the claim allows, plus the pool's
// template labels.
func launches(s *scheduler.Snapshot, nc *scheduler.NewNodeClaim) []map[string]string {
	var tmpl map[string]string
	for _, np := range s.NodePools {
		if np.Name == nc.NodePool {
			tmpl = np.Spec.Template.ObjectMeta.Labels
		}
	}
	var out []map[string]string
	for _, it := range nc.InstanceTypes {
		for _, o := range it.Offerings {
			if !o.Available || !nc.Requirements.Get(zoneKey).Has(o.Zone) || !nc.Requirements.Get(ctKey).Has(o.CapacityType) {
				continue
			}
			l := it.Requirements.Labels()
			for k, v := range nc.Requirements.Labels() {
				l[k] = v
			}
			for k, v := range tmpl {
				l[k] = v
			}
			l[zoneKey], l[ctKey] = o.Zone, o.CapacityType
			out = append(out, l)
		}
	}
	return out
}

// holds evaluates one node selector requirement on a node's labels, as the API defines it.
func holds(labels map[string]string, e corev1.NodeSelectorRequirement) bool {
	v, ok := labels[e.Key]
	switch e.Operator {
	case corev1.NodeSelectorOpIn:
		return ok && slices.Contains(e.Values, v)
	case corev1.NodeSelectorOpNotIn:
		return !ok || !slices.Contains(e.Values, v)
	case corev1.NodeSelectorOpExists:
		return ok
	case corev1.NodeSelectorOpDoesNotExist:
		return !ok
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		n, err1 := strconv.Atoi(v)
		bound, err2 := strconv.Atoi(e.Values[0])
		if !ok || err1 != nil || err2 != nil {
			return false
		}
		if e.Operator == corev1.NodeSelectorOpGt {
			return n > bound
		}
		return n < bound
	}
	return false
}

// requireAllPlaced fails unless every pending pod was placed.
func requireAllPlaced(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
	t.Helper()
	if len(r.Unschedulable) != 0 || r.PodCount() != len(s.Pods) {
		t.Fatalf("placed %d of %d pods; unschedulable: %s", r.PodCount(), len(s.Pods), reasons(r))
	}
}

// reasons renders the unschedulable pods with their reasons.
func reasons(r *scheduler.Results) string {
	var b strings.Builder
	for _, u := range r.Unschedulable {
		fmt.Fprintf(&b, "[%s: %s] ", u.Pod.Name, u.Reason)
	}
	return b.String()
}

// requireReason fails unless exactly want pods are unschedulable, each with a
// reason containing every fragment.
func requireReason(t *testing.T, r *scheduler.Results, want int, fragments ...string) {
	t.Helper()
	if len(r.Unschedulable) != want {
		t.Fatalf("%d pods unschedulable, want %d: %s", len(r.Unschedulable), want, reasons(r))
	}
	for _, u := range r.Unschedulable {
		for _, f := range fragments {
			if !strings.Contains(u.Reason, f) {
				t.Errorf("%s: reason %q does not contain %q", u.Pod.Name, u.Reason, f)
			}
		}
	}
}

func TestNodeSelectionOperators(t *testing.T) {
	const (
		cpuKey    = v1alpha1.LabelInstanceCPU
		memKey    = v1alpha1.LabelInstanceMemory
		gpuKey    = v1alpha1.LabelInstanceGPUCount
		familyKey = v1alpha1.LabelInstanceFamily
		genKey    = v1alpha1.LabelInstanceGeneration
		typeKey   = corev1.LabelInstanceTypeStable
		archKey   = corev1.LabelArchStable
	)
	In, NotIn, Exists, DoesNotExist, Gt, Lt := corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists,
		corev1.NodeSelectorOpDoesNotExist, corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt
	team := poolLabels(map[string]string{"team": "search", "tier": "3"})
	for _, tc := range []struct {
		name string
		// terms are ORed; each launch must satisfy one of them entirely.
		terms    [][]corev1.NodeSelectorRequirement
		selector map[string]string
		pool     []func(*v1alpha1.NodePool)
		cpu      string
	}{
		{name: "instance-type In", terms: [][]corev1.NodeSelectorRequirement{{expr(typeKey, In, "m6i.xlarge", "c6i.2xlarge")}}},
		{name: "instance-type NotIn", terms: [][]corev1.NodeSelectorRequirement{{expr(typeKey, NotIn, "t3.medium", "t3.large", "t3.xlarge", "t3.2xlarge")}}},
		{name: "instance-type Exists", terms: [][]corev1.NodeSelectorRequirement{{expr(typeKey, Exists)}}},
		{name: "zone In", terms: [][]corev1.NodeSelectorRequirement{{expr(zoneKey, In, "us-east-1b")}}},
		{name: "zone NotIn", terms: [][]corev1.NodeSelectorRequirement{{expr(zoneKey, NotIn, "us-east-1a", "us-east-1b")}}},
		{name: "capacity-type In", terms: [][]corev1.NodeSelectorRequirement{{expr(ctKey, In, v1alpha1.CapacityTypeOnDemand)}}},
		{name: "capacity-type NotIn", terms: [][]corev1.NodeSelectorRequirement{{expr(ctKey, NotIn, v1alpha1.CapacityTypeSpot)}}},
		{name: "arch In", terms: [][]corev1.NodeSelectorRequirement{{expr(archKey, In, "arm64")}}},
		{name: "arch NotIn", terms: [][]corev1.NodeSelectorRequirement{{expr(archKey, NotIn, "arm64")}}},
		{name: "instance-cpu Gt", terms: [][]corev1.NodeSelectorRequirement{{expr(cpuKey, Gt, "31")}}},
		{name: "instance-cpu Lt", terms: [][]corev1.NodeSelectorRequirement{{expr(cpuKey, Lt, "3")}}, cpu: "250m"},
		{name: "instance-cpu In", terms: [][]corev1.NodeSelectorRequirement{{expr(cpuKey, In, "16")}}},
		{name: "instance-memory Gt", terms: [][]corev1.NodeSelectorRequirement{{expr(memKey, Gt, "262144")}}},
		{name: "instance-memory Lt", terms: [][]corev1.NodeSelectorRequirement{{expr(memKey, Lt, "4097")}}, cpu: "250m"},
		{name: "instance-gpu-count Exists", terms: [][]corev1.NodeSelectorRequirement{{expr(gpuKey, Exists)}}},
		{name: "instance-gpu-count DoesNotExist", terms: [][]corev1.NodeSelectorRequirement{{expr(gpuKey, DoesNotExist)}}},
		{name: "instance-gpu-count Gt", terms: [][]corev1.NodeSelectorRequirement{{expr(gpuKey, Gt, "4")}}},
		{name: "instance-gpu-count Lt", terms: [][]corev1.NodeSelectorRequirement{{expr(gpuKey, Lt, "2")}}},
		{name: "instance-gpu-count NotIn", terms: [][]corev1.NodeSelectorRequirement{{expr(gpuKey, NotIn, "1", "4", "8")}}},
		{name: "instance-family In", terms: [][]corev1.NodeSelectorRequirement{{expr(familyKey, In, "r7g")}}},
		{name: "instance-family NotIn", terms: [][]corev1.NodeSelectorRequirement{{expr(familyKey, NotIn, "t3", "c7g", "m7g", "c6g", "m6g")}}},
		{name: "instance-generation Gt", terms: [][]corev1.NodeSelectorRequirement{{expr(genKey, Gt, "6")}}},
		{name: "instance-generation Lt", terms: [][]corev1.NodeSelectorRequirement{{expr(genKey, Lt, "6")}}},
		{name: "instance-generation DoesNotExist is impossible only for unlabelled types", terms: [][]corev1.NodeSelectorRequirement{{expr(genKey, Exists), expr(gpuKey, DoesNotExist)}}},
		{name: "Gt and Lt together", terms: [][]corev1.NodeSelectorRequirement{{expr(cpuKey, Gt, "4"), expr(cpuKey, Lt, "16"), expr(familyKey, In, "m7i")}}},
		{name: "pool label In", terms: [][]corev1.NodeSelectorRequirement{{expr("team", In, "search")}}, pool: []func(*v1alpha1.NodePool){team}},
		{name: "pool label NotIn", terms: [][]corev1.NodeSelectorRequirement{{expr("team", NotIn, "ads")}}, pool: []func(*v1alpha1.NodePool){team}},
		{name: "pool label Exists", terms: [][]corev1.NodeSelectorRequirement{{expr("team", Exists)}}, pool: []func(*v1alpha1.NodePool){team}},
		{name: "pool label DoesNotExist", terms: [][]corev1.NodeSelectorRequirement{{expr("gpu-team", DoesNotExist)}}, pool: []func(*v1alpha1.NodePool){team}},
		{name: "pool label Gt", terms: [][]corev1.NodeSelectorRequirement{{expr("tier", Gt, "2")}}, pool: []func(*v1alpha1.NodePool){team}},
		{name: "pool label Lt", terms: [][]corev1.NodeSelectorRequirement{{expr("tier", Lt, "4")}}, pool: []func(*v1alpha1.NodePool){team}},
		{name: "pool requirement Exists on a custom key", terms: [][]corev1.NodeSelectorRequirement{{expr("example.com/pool", Exists)}},
			pool: []func(*v1alpha1.NodePool){require("example.com/pool", "In", "batch")}},
		{name: "nodeSelector on well-known labels", selector: map[string]string{zoneKey: "us-east-1c", archKey: "arm64", ctKey: v1alpha1.CapacityTypeOnDemand, familyKey: "m7g"}},
		{name: "nodeSelector on instance-type", selector: map[string]string{typeKey: "r6i.large"}},
		{name: "nodeSelector on a pool label", selector: map[string]string{"team": "search"}, pool: []func(*v1alpha1.NodePool){team}},
		{name: "nodeSelector and affinity together", selector: map[string]string{archKey: "amd64"}, terms: [][]corev1.NodeSelectorRequirement{{expr(cpuKey, Gt, "8")}}},
		{name: "OR: the first term is impossible", terms: [][]corev1.NodeSelectorRequirement{
			{expr(familyKey, In, "c7g"), expr(archKey, In, "amd64")}, {expr(familyKey, In, "r6i")}}},
		{name: "OR: both possible, each launch satisfies one whole term", terms: [][]corev1.NodeSelectorRequirement{
			{expr(familyKey, In, "c6i"), expr(zoneKey, In, "us-east-1a")}, {expr(familyKey, In, "m6i"), expr(zoneKey, In, "us-east-1b")}}},
		{name: "OR: three terms on different operators", terms: [][]corev1.NodeSelectorRequirement{
			{expr(cpuKey, Gt, "1000")}, {expr(gpuKey, Exists), expr(familyKey, In, "c6i")}, {expr(ctKey, In, v1alpha1.CapacityTypeOnDemand), expr(zoneKey, NotIn, "us-east-1a")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cpu := tc.cpu
			if cpu == "" {
				cpu = "1"
			}
			mutate := []func(*corev1.Pod){}
			if len(tc.terms) > 0 {
				mutate = append(mutate, requireNode(tc.terms...))
			}
			for k, v := range tc.selector {
				mutate = append(mutate, selectNode(k, v))
			}
			s := snapshot(pods(3, "app", cpu, "1Gi", mutate...), pool("default", tc.pool...))
			r := solve(t, s, scheduler.Options{})
			requireAllPlaced(t, s, r)
			if len(r.NewNodeClaims) == 0 {
				t.Fatal("no nodeclaim")
			}
			var sel []corev1.NodeSelectorRequirement
			for k, v := range tc.selector {
				sel = append(sel, expr(k, In, v))
			}
			for _, nc := range r.NewNodeClaims {
				ls := launches(s, nc)
				if len(ls) == 0 {
					t.Fatalf("%s can launch nothing", nc.Name)
				}
				for _, l := range ls {
					ok := slices.ContainsFunc(append(tc.terms, nil), func(term []corev1.NodeSelectorRequirement) bool {
						if term == nil && len(tc.terms) > 0 {
							return false
						}
						return !slices.ContainsFunc(slices.Concat(term, sel), func(e corev1.NodeSelectorRequirement) bool { return !holds(l, e) })
					})
					if !ok {
						t.Fatalf("%s could launch %s in %s (%s), which fails the pod's node selection", nc.Name, l[typeKey], l[zoneKey], l[ctKey])
					}
				}
			}
		})
	}
}

func TestImpossibleNodeSelectionNamesPoolAndLabel(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*corev1.Pod)
		pools  []*v1alpha1.NodePool
		// want are fragments of the reason
		want []string
	}{
		{"family outside the pool's", requireNode([]corev1.NodeSelectorRequirement{expr(v1alpha1.LabelInstanceFamily, corev1.NodeSelectorOpIn, "m6i")}),
			[]*v1alpha1.NodePool{pool("web", require(v1alpha1.LabelInstanceFamily, "In", "c6i"))}, []string{"nodepool web:", v1alpha1.LabelInstanceFamily}},
		{"pool label with another value", selectNode("team", "ads"),
			[]*v1alpha1.NodePool{pool("search", poolLabels(map[string]string{"team": "search"}))}, []string{"nodepool search:", "team"}},
		{"label no pool sets", requireNode([]corev1.NodeSelectorRequirement{expr("example.com/rack", corev1.NodeSelectorOpExists)}),
			[]*v1alpha1.NodePool{pool("web")}, []string{"nodepool web:", "example.com/rack"}},
		{"no type has the cpu", requireNode([]corev1.NodeSelectorRequirement{expr(v1alpha1.LabelInstanceCPU, corev1.NodeSelectorOpGt, "1000")}),
			[]*v1alpha1.NodePool{pool("web")}, []string{"nodepool web:", v1alpha1.LabelInstanceCPU}},
		{"zone the pool excludes", selectNode(zoneKey, "us-east-1a"),
			[]*v1alpha1.NodePool{pool("web", require(zoneKey, "In", "us-east-1b"))}, []string{"nodepool web:", zoneKey}},
		{"every OR term impossible", requireNode(
			[]corev1.NodeSelectorRequirement{expr(corev1.LabelArchStable, corev1.NodeSelectorOpIn, "s390x")},
			[]corev1.NodeSelectorRequirement{expr(ctKey, corev1.NodeSelectorOpIn, v1alpha1.CapacityTypeReserved)}),
			[]*v1alpha1.NodePool{pool("web")}, []string{"nodepool web:", corev1.LabelArchStable}},
		{"every pool is named", selectNode(corev1.LabelArchStable, "arm64"),
			[]*v1alpha1.NodePool{pool("x86", require(corev1.LabelArchStable, "In", "amd64")), pool("intel", require(v1alpha1.LabelInstanceFamily, "In", "c6i"))},
			[]string{"nodepool x86:", "nodepool intel:", corev1.LabelArchStable}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := solve(t, snapshot(pods(1, "app", "1", "1Gi", tc.mutate), tc.pools...), scheduler.Options{})
			requireReason(t, r, 1, tc.want...)
		})
	}
}

// TestTopologySpreadKeys spreads over each key with maxSkew 1 and 2 and checks
// the final skew and that every domain is used.
func TestTopologySpreadKeys(t *testing.T) {
	twoCapacityTypes := require(ctKey, "In", v1alpha1.CapacityTypeSpot, v1alpha1.CapacityTypeOnDemand)
	for _, tc := range []struct {
		key     string
		skew    int32
		n       int
		domains int // how many domains the pods must use at least
	}{
		{zoneKey, 1, 9, 3},
		{zoneKey, 2, 7, 3},
		{hostKey, 1, 6, 6},
		{hostKey, 2, 6, 3},
		{ctKey, 1, 6, 2},
		{ctKey, 2, 5, 2},
	} {
		t.Run(fmt.Sprintf("%s maxSkew %d", tc.key, tc.skew), func(t *testing.T) {
			s := snapshot(pods(tc.n, "web", "500m", "1Gi", spreadBy(tc.key, tc.skew, corev1.DoNotSchedule)), pool("default", twoCapacityTypes))
			r := solve(t, s, scheduler.Options{})
			requireAllPlaced(t, s, r)
			got := countBy(s, r, "web", tc.key)
			if _, unpinned := got[""]; unpinned {
				t.Fatalf("some pods have no %s domain: %v", tc.key, got)
			}
			lo, hi := tc.n, 0
			for _, c := range got {
				lo, hi = min(lo, c), max(hi, c)
			}
			if tc.key == hostKey {
				lo = 0 // a new node can always join
			}
			if hi-lo > int(tc.skew) || len(got) < tc.domains {
				t.Errorf("counts %v: skew %d > %d or fewer than %d domains", got, hi-lo, tc.skew, tc.domains)
			}
			if tc.key == ctKey {
				for _, nc := range r.NewNodeClaims {
					if want := nc.Requirements.Get(ctKey).Any(); nc.Offering.CapacityType != want {
						t.Errorf("%s is pinned to %s but priced as %s", nc.Name, want, nc.Offering.CapacityType)
					}
				}
			}
		})
	}
}

// TestTopologySpreadOnTwoKeys places pods that spread over two keys at once:
// a new claim is pinned on each key in turn, and a key not pinned yet must
// not count against the other's choice (seed 58 of the scenario generator).
func TestTopologySpreadOnTwoKeys(t *testing.T) {
	twoCapacityTypes := require(ctKey, "In", v1alpha1.CapacityTypeSpot, v1alpha1.CapacityTypeOnDemand)
	for _, tc := range []struct {
		keys  [2]string
		skews [2]int32
		n     int
	}{
		{[2]string{zoneKey, ctKey}, [2]int32{1, 2}, 1},
		{[2]string{zoneKey, ctKey}, [2]int32{1, 1}, 6},
		{[2]string{ctKey, zoneKey}, [2]int32{1, 1}, 6},
		{[2]string{zoneKey, hostKey}, [2]int32{1, 1}, 6},
	} {
		t.Run(fmt.Sprintf("%s and %s, %d pods", tc.keys[0], tc.keys[1], tc.n), func(t *testing.T) {
			s := snapshot(pods(tc.n, "web", "1200m", "5376Mi", spreadBy(tc.keys[0], tc.skews[0], corev1.DoNotSchedule),
				spreadBy(tc.keys[1], tc.skews[1], corev1.DoNotSchedule)), pool("default", twoCapacityTypes))
			r := solve(t, s, scheduler.Options{})
			requireAllPlaced(t, s, r)
			for i, key := range tc.keys {
				got := countBy(s, r, "web", key)
				if _, unpinned := got[""]; unpinned {
					t.Fatalf("some pods have no %s domain: %v", key, got)
				}
				lo, hi := tc.n, 0
				for _, c := range got {
					lo, hi = min(lo, c), max(hi, c)
				}
				if key == hostKey || len(got) == 1 {
					lo = 0
				}
				if hi-lo > int(tc.skews[i]) {
					t.Errorf("%s counts %v: skew %d > %d", key, got, hi-lo, tc.skews[i])
				}
			}
		})
	}
}

func TestTopologySpreadOptions(t *testing.T) {
	ignore, honor := ptr.To(corev1.NodeInclusionPolicyIgnore), ptr.To(corev1.NodeInclusionPolicyHonor)
	inZoneA := requireNode([]corev1.NodeSelectorRequirement{expr(zoneKey, corev1.NodeSelectorOpIn, "us-east-1a")})
	// selectZoneA sets an empty Affinity beside the nodeSelector: the checker's
	// spreadPolicy.signature dereferences Affinity.NodeAffinity whenever a
	// nodeSelector is set, and panics on a pod with a nodeSelector and no affinity.
	selectZoneA := func(p *corev1.Pod) {
		selectNode(zoneKey, "us-east-1a")(p)
		affinityOf(p)
	}
	zoneC := pool("tainted", poolTaint("dedicated"), require(zoneKey, "In", "us-east-1c"))
	zonesAB := pool("open", require(zoneKey, "In", "us-east-1a", "us-east-1b"))
	for _, tc := range []struct {
		name   string
		snap   func() *scheduler.Snapshot
		opts   scheduler.Options
		placed int
		// zones is the wanted count per zone of the placed web pods, nil to skip.
		zones map[string]int
		// reason fragments for the unschedulable pods
		reason []string
	}{
		{name: "DoNotSchedule with nodeAffinityPolicy Ignore counts zones the pod cannot use",
			snap: func() *scheduler.Snapshot {
				return snapshot(pods(3, "web", "1", "1Gi", inZoneA, spreadBy(zoneKey, 1, corev1.DoNotSchedule, func(c *corev1.TopologySpreadConstraint) { c.NodeAffinityPolicy = ignore })), pool("default"))
			},
			placed: 1, zones: map[string]int{"us-east-1a": 1}, reason: []string{"nodepool default:", "topology spread", zoneKey}},
		{name: "ScheduleAnyway is a preference that gives way",
			snap: func() *scheduler.Snapshot {
				return snapshot(pods(3, "web", "1", "1Gi", inZoneA, spreadBy(zoneKey, 1, corev1.ScheduleAnyway, func(c *corev1.TopologySpreadConstraint) { c.NodeAffinityPolicy = ignore })), pool("default"))
			},
			opts: scheduler.Options{Preferences: scheduler.PreferencesRespect}, placed: 3, zones: map[string]int{"us-east-1a": 3}},
		{name: "ScheduleAnyway is respected while it can hold",
			snap: func() *scheduler.Snapshot {
				return snapshot(pods(6, "web", "1", "1Gi", spreadBy(zoneKey, 1, corev1.ScheduleAnyway)), pool("default"))
			},
			opts: scheduler.Options{Preferences: scheduler.PreferencesRespect}, placed: 6, zones: map[string]int{"us-east-1a": 2, "us-east-1b": 2, "us-east-1c": 2}},
		{name: "nodeAffinityPolicy Honor counts only the zones the pod can use",
			snap: func() *scheduler.Snapshot {
				return snapshot(pods(3, "web", "1", "1Gi", inZoneA, spreadBy(zoneKey, 1, corev1.DoNotSchedule, func(c *corev1.TopologySpreadConstraint) { c.NodeAffinityPolicy = honor })), pool("default"))
			},
			placed: 3, zones: map[string]int{"us-east-1a": 3}},
		{name: "nodeAffinityPolicy defaults to Honor, and covers the nodeSelector",
			snap: func() *scheduler.Snapshot {
				return snapshot(pods(3, "web", "1", "1Gi", selectZoneA, spreadBy(zoneKey, 1, corev1.DoNotSchedule)), pool("default"))
			},
			placed: 3, zones: map[string]int{"us-east-1a": 3}},
		{name: "nodeTaintsPolicy Ignore (default) counts a tainted pool's zone",
			snap: func() *scheduler.Snapshot {
				return snapshot(pods(4, "web", "1", "1Gi", spreadBy(zoneKey, 1, corev1.DoNotSchedule)), zoneC, zonesAB)
			},
			placed: 2, zones: map[string]int{"us-east-1a": 1, "us-east-1b": 1}, reason: []string{"nodepool tainted: taint dedicated", "nodepool open:", "topology spread"}},
		{name: "nodeTaintsPolicy Honor leaves the tainted pool's zone out",
			snap: func() *scheduler.Snapshot {
				return snapshot(pods(4, "web", "1", "1Gi", spreadBy(zoneKey, 1, corev1.DoNotSchedule, func(c *corev1.TopologySpreadConstraint) { c.NodeTaintsPolicy = honor })), zoneC, zonesAB)
			},
			placed: 4, zones: map[string]int{"us-east-1a": 2, "us-east-1b": 2}},
		{name: "nodeTaintsPolicy Honor with a toleration keeps the zone",
			snap: func() *scheduler.Snapshot {
				return snapshot(pods(6, "web", "1", "1Gi", tolerate("dedicated"), spreadBy(zoneKey, 1, corev1.DoNotSchedule, func(c *corev1.TopologySpreadConstraint) { c.NodeTaintsPolicy = honor })), zoneC, zonesAB)
			},
			placed: 6, zones: map[string]int{"us-east-1a": 2, "us-east-1b": 2, "us-east-1c": 2}},
		{name: "minDomains above the zones there are keeps the global minimum at 0",
			snap: func() *scheduler.Snapshot {
				return snapshot(pods(6, "web", "1", "1Gi", spreadBy(zoneKey, 1, corev1.DoNotSchedule, func(c *corev1.TopologySpreadConstraint) { c.MinDomains = ptr.To(int32(4)) })), pool("default"))
			},
			placed: 3, zones: map[string]int{"us-east-1a": 1, "us-east-1b": 1, "us-east-1c": 1}, reason: []string{"nodepool default:", "topology spread"}},
		{name: "minDomains met by the zones there are",
			snap: func() *scheduler.Snapshot {
				return snapshot(pods(6, "web", "1", "1Gi", spreadBy(zoneKey, 1, corev1.DoNotSchedule, func(c *corev1.TopologySpreadConstraint) { c.MinDomains = ptr.To(int32(3)) })), pool("default"))
			},
			placed: 6, zones: map[string]int{"us-east-1a": 2, "us-east-1b": 2, "us-east-1c": 2}},
		{name: "pods already running count: zone a is full",
			snap: func() *scheduler.Snapshot {
				s := snapshot(pods(4, "web", "1", "1Gi", spreadBy(zoneKey, 1, corev1.DoNotSchedule)), pool("default"))
				s.Nodes = []*scheduler.StateNode{existingNode("node-a", "us-east-1a", "32", pods(2, "old", "1", "1Gi", withLabel("app", "web"))...)}
				return s
			},
			placed: 4, zones: map[string]int{"us-east-1b": 2, "us-east-1c": 2}},
		{name: "matchLabelKeys: the old revision does not count",
			snap: func() *scheduler.Snapshot {
				mlk := func(c *corev1.TopologySpreadConstraint) { c.MatchLabelKeys = []string{"pod-template-hash"} }
				s := snapshot(pods(3, "web", "1", "1Gi", withLabel("pod-template-hash", "v2"), spreadBy(zoneKey, 1, corev1.DoNotSchedule, mlk)), pool("default"))
				s.Nodes = []*scheduler.StateNode{existingNode("node-a", "us-east-1a", "32", pods(3, "old", "1", "1Gi", withLabel("app", "web"), withLabel("pod-template-hash", "v1"))...)}
				return s
			},
			placed: 3, zones: map[string]int{"us-east-1a": 1, "us-east-1b": 1, "us-east-1c": 1}},
		{name: "without matchLabelKeys the old revision counts",
			snap: func() *scheduler.Snapshot {
				s := snapshot(pods(2, "web", "1", "1Gi", withLabel("pod-template-hash", "v2"), spreadBy(zoneKey, 1, corev1.DoNotSchedule)), pool("default"))
				s.Nodes = []*scheduler.StateNode{existingNode("node-a", "us-east-1a", "32", pods(1, "old", "1", "1Gi", withLabel("app", "web"), withLabel("pod-template-hash", "v1"))...)}
				return s
			},
			placed: 2, zones: map[string]int{"us-east-1a": 0, "us-east-1b": 1, "us-east-1c": 1}},
		{name: "capacity-type spread counts running pods",
			snap: func() *scheduler.Snapshot {
				s := snapshot(pods(4, "web", "1", "1Gi", spreadBy(ctKey, 1, corev1.DoNotSchedule)), pool("default"))
				s.Nodes = []*scheduler.StateNode{existingNode("node-a", "us-east-1a", "32", pods(2, "old", "1", "1Gi", withLabel("app", "web"))...)}
				return s
			},
			placed: 4},
		{name: "ScheduleAnyway counts running pods",
			snap: func() *scheduler.Snapshot {
				s := snapshot(pods(4, "web", "1", "1Gi", spreadBy(zoneKey, 1, corev1.ScheduleAnyway)), pool("default"))
				s.Nodes = []*scheduler.StateNode{existingNode("node-a", "us-east-1a", "32", pods(2, "old", "1", "1Gi", withLabel("app", "web"))...)}
				return s
			},
			opts: scheduler.Options{Preferences: scheduler.PreferencesRespect}, placed: 4, zones: map[string]int{"us-east-1a": 0, "us-east-1b": 2, "us-east-1c": 2}},
		{name: "hostname: a running matching pod keeps new pods off its node",
			snap: func() *scheduler.Snapshot {
				s := snapshot(pods(3, "web", "1", "1Gi", spreadBy(hostKey, 1, corev1.DoNotSchedule)), pool("default"))
				s.Nodes = []*scheduler.StateNode{existingNode("node-a", "us-east-1a", "32", pods(1, "old", "1", "1Gi", withLabel("app", "web"))...)}
				return s
			},
			placed: 3},
		{name: "the ignore policy drops ScheduleAnyway",
			snap: func() *scheduler.Snapshot {
				return snapshot(pods(6, "web", "1", "1Gi", selectNode(ctKey, v1alpha1.CapacityTypeOnDemand), spreadBy(zoneKey, 1, corev1.ScheduleAnyway)), pool("default"))
			},
			opts: scheduler.Options{Preferences: scheduler.PreferencesIgnore}, placed: 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.snap()
			r := solve(t, s, tc.opts)
			if r.PodCount() != tc.placed {
				t.Fatalf("placed %d, want %d; unschedulable %s", r.PodCount(), tc.placed, reasons(r))
			}
			requireReason(t, r, len(s.Pods)-tc.placed, tc.reason...)
			got := countBy(s, r, "web", zoneKey)
			for z, want := range tc.zones {
				if got[z] != want {
					t.Errorf("zone %s has %d web pods, want %d (all: %v)", z, got[z], want, got)
				}
			}
			if strings.HasPrefix(tc.name, "hostname") {
				for _, pl := range r.Existing {
					t.Errorf("%s went to %s, which already runs a matching pod", pl.Pod.Name, pl.Node)
				}
				if hosts := countBy(s, r, "web", hostKey); len(hosts) != 3 {
					t.Errorf("web pods share hosts: %v", hosts)
				}
			}
			if strings.HasPrefix(tc.name, "capacity-type") {
				if got := countBy(s, r, "web", ctKey); got[v1alpha1.CapacityTypeSpot] != 3 || got[v1alpha1.CapacityTypeOnDemand] != 1 {
					t.Errorf("web pods by capacity type %v, want 3 spot and 1 on-demand beside the 2 running on on-demand", got)
				}
			}
			if tc.opts.Preferences == scheduler.PreferencesIgnore {
				if len(got) != 1 {
					t.Errorf("with preferences ignored the pods should pack into one zone, got %v", got)
				}
			}
		})
	}
}

func TestPodAffinityAndAntiAffinity(t *testing.T) {
	dbOn := func(node, zone string, mutate ...func(*corev1.Pod)) *scheduler.StateNode {
		return existingNode(node, zone, "8", pods(1, "db", "1", "1Gi", mutate...)...)
	}
	for _, tc := range []struct {
		name  string
		snap  func() *scheduler.Snapshot
		opts  scheduler.Options
		check func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results)
	}{
		{name: "required zone affinity to a running pod",
			snap: func() *scheduler.Snapshot {
				s := snapshot(pods(6, "web", "4", "1Gi", podAffinity(false, 0, zoneKey, "db")), pool("default"))
				s.Nodes = []*scheduler.StateNode{dbOn("node-b", "us-east-1b")}
				return s
			},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				requireAllPlaced(t, s, r)
				if got := countBy(s, r, "web", zoneKey); got["us-east-1b"] != 6 {
					t.Errorf("web pods by zone %v, want all in us-east-1b with the db pod", got)
				}
			}},
		{name: "required hostname affinity to a running pod",
			snap: func() *scheduler.Snapshot {
				s := snapshot(pods(3, "web", "1", "1Gi", podAffinity(false, 0, hostKey, "db")), pool("default"))
				s.Nodes = []*scheduler.StateNode{dbOn("node-b", "us-east-1b")}
				return s
			},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				requireAllPlaced(t, s, r)
				if len(r.Existing) != 3 {
					t.Errorf("%d web pods joined node-b, want 3", len(r.Existing))
				}
			}},
		{name: "required hostname affinity to a running pod on a full node",
			snap: func() *scheduler.Snapshot {
				s := snapshot(pods(2, "web", "4", "1Gi", podAffinity(false, 0, hostKey, "db")), pool("default"))
				s.Nodes = []*scheduler.StateNode{dbOn("node-b", "us-east-1b")}
				return s
			},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				if len(r.Existing) != 1 {
					t.Errorf("%d web pods on node-b, want 1 (room for one)", len(r.Existing))
				}
				requireReason(t, r, 1, "nodepool default:", "pod affinity", hostKey)
			}},
		{name: "required zone affinity to pending pods placed later",
			snap: func() *scheduler.Snapshot {
				return snapshot(append(pods(4, "web", "4", "1Gi", podAffinity(false, 0, zoneKey, "cache")),
					pods(2, "cache", "1", "1Gi", spreadBy(zoneKey, 1, corev1.DoNotSchedule))...), pool("default"))
			},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				requireAllPlaced(t, s, r)
				cache := countBy(s, r, "cache", zoneKey)
				for z, n := range countBy(s, r, "web", zoneKey) {
					if cache[z] == 0 {
						t.Errorf("%d web pods in %s, where no cache pod is (cache: %v)", n, z, cache)
					}
				}
			}},
		{name: "required hostname affinity to pending pods",
			snap: func() *scheduler.Snapshot {
				return snapshot(append(pods(2, "web", "500m", "1Gi", podAffinity(false, 0, hostKey, "cache")), pods(1, "cache", "2", "1Gi")...), pool("default"))
			},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				requireAllPlaced(t, s, r)
				if len(r.NewNodeClaims) != 1 {
					t.Errorf("%d nodeclaims, want the web pods with the cache pod on one", len(r.NewNodeClaims))
				}
			}},
		{name: "required hostname affinity to smaller pending pods, placed after the pod that needs them",
			snap: func() *scheduler.Snapshot {
				return snapshot(append(pods(2, "web", "4", "1Gi", podAffinity(false, 0, hostKey, "cache")), pods(1, "cache", "500m", "1Gi")...), pool("default"))
			},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				requireAllPlaced(t, s, r)
				cache := countBy(s, r, "cache", hostKey)
				for h := range countBy(s, r, "web", hostKey) {
					if cache[h] == 0 {
						t.Errorf("a web pod is on %s, where no cache pod is (cache: %v)", h, cache)
					}
				}
			}},
		{name: "required zone affinity to smaller pending pods",
			snap: func() *scheduler.Snapshot {
				return snapshot(append(pods(3, "web", "4", "1Gi", podAffinity(false, 0, zoneKey, "cache")), pods(1, "cache", "500m", "1Gi")...), pool("default"))
			},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				requireAllPlaced(t, s, r)
				cache := countBy(s, r, "cache", zoneKey)
				for z := range countBy(s, r, "web", zoneKey) {
					if cache[z] == 0 {
						t.Errorf("a web pod is in %s, where no cache pod is (cache: %v)", z, cache)
					}
				}
			}},
		{name: "required hostname affinity from pods that own a spread (and so go first) to pending pods",
			snap: func() *scheduler.Snapshot {
				return snapshot(append(pods(2, "web", "1", "1Gi", podAffinity(false, 0, hostKey, "cache"), spreadBy(zoneKey, 2, corev1.DoNotSchedule)),
					pods(1, "cache", "2", "1Gi")...), pool("default"))
			},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				requireAllPlaced(t, s, r)
				if len(r.NewNodeClaims) != 1 {
					t.Errorf("%d nodeclaims, want the web pods with the cache pod on one", len(r.NewNodeClaims))
				}
			}},
		{name: "a pending pod's hostname anti-affinity repels pods placed after it",
			snap: func() *scheduler.Snapshot {
				return snapshot(append(pods(1, "db", "4", "8Gi", podAffinity(true, 0, hostKey, "web")), pods(4, "web", "250m", "256Mi")...), pool("default"))
			},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				requireAllPlaced(t, s, r)
				db := countBy(s, r, "db", hostKey)
				for h := range countBy(s, r, "web", hostKey) {
					if db[h] > 0 {
						t.Errorf("a web pod shares %s with the db pod that repels it", h)
					}
				}
			}},
		{name: "a pending pod's zone anti-affinity repels pods placed after it",
			snap: func() *scheduler.Snapshot {
				return snapshot(append(pods(1, "db", "4", "8Gi", podAffinity(true, 0, zoneKey, "web")), pods(4, "web", "250m", "256Mi")...), pool("default"))
			},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				requireAllPlaced(t, s, r)
				db := countBy(s, r, "db", zoneKey)
				for z := range countBy(s, r, "web", zoneKey) {
					if db[z] > 0 || z == "" {
						t.Errorf("a web pod is in zone %q with the db pod that repels it (db: %v)", z, db)
					}
				}
			}},
		{name: "preferred hostname affinity to a smaller pending pod",
			snap: func() *scheduler.Snapshot {
				return snapshot(append(pods(2, "web", "1", "1Gi", podAffinity(false, 10, hostKey, "cache")), pods(1, "cache", "500m", "1Gi")...), pool("default"))
			},
			opts: scheduler.Options{Preferences: scheduler.PreferencesRespect},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				requireAllPlaced(t, s, r)
				if len(r.NewNodeClaims) != 1 {
					t.Errorf("%d nodeclaims, want 1: the preference can hold", len(r.NewNodeClaims))
				}
			}},
		{name: "required affinity nothing matches: the first pod of its own selector starts the group",
			snap: func() *scheduler.Snapshot {
				return snapshot(pods(4, "web", "1", "1Gi", podAffinity(false, 0, zoneKey, "web")), pool("default"))
			},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				requireAllPlaced(t, s, r)
				if got := countBy(s, r, "web", zoneKey); len(got) != 1 {
					t.Errorf("self-affine pods in several zones: %v", got)
				}
			}},
		{name: "required affinity to pods that exist nowhere",
			snap: func() *scheduler.Snapshot {
				return snapshot(pods(1, "web", "1", "1Gi", podAffinity(false, 0, zoneKey, "ghost")), pool("default"))
			},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				requireReason(t, r, 1, "nodepool default:", "pod affinity", zoneKey, "app=ghost")
			}},
		{name: "required affinity to pods that exist nowhere is named before the pod's spread",
			snap: func() *scheduler.Snapshot {
				return snapshot(pods(1, "web", "1", "1Gi", spreadBy(zoneKey, 1, corev1.DoNotSchedule), podAffinity(false, 0, hostKey, "ghost")), pool("default"))
			},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				requireReason(t, r, 1, "nodepool default:", "pod affinity", hostKey, "app=ghost")
			}},
		{name: "required hostname anti-affinity to a running pod",
			snap: func() *scheduler.Snapshot {
				s := snapshot(pods(2, "web", "1", "1Gi", podAffinity(true, 0, hostKey, "db")), pool("default"))
				s.Nodes = []*scheduler.StateNode{dbOn("node-b", "us-east-1b")}
				return s
			},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				requireAllPlaced(t, s, r)
				if len(r.Existing) != 0 {
					t.Errorf("web pods joined the db node: %+v", r.Existing)
				}
			}},
		{name: "required zone anti-affinity to a running pod",
			snap: func() *scheduler.Snapshot {
				s := snapshot(pods(4, "web", "1", "1Gi", podAffinity(true, 0, zoneKey, "db")), pool("default"))
				s.Nodes = []*scheduler.StateNode{dbOn("node-b", "us-east-1b")}
				return s
			},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				requireAllPlaced(t, s, r)
				if got := countBy(s, r, "web", zoneKey); got["us-east-1b"] != 0 || got[""] != 0 {
					t.Errorf("web pods by zone %v: none may be in us-east-1b or unpinned", got)
				}
			}},
		{name: "a running pod's hostname anti-affinity repels new pods",
			snap: func() *scheduler.Snapshot {
				s := snapshot(pods(2, "web", "1", "1Gi"), pool("default"))
				s.Nodes = []*scheduler.StateNode{dbOn("node-b", "us-east-1b", podAffinity(true, 0, hostKey, "web"))}
				return s
			},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				requireAllPlaced(t, s, r)
				if len(r.Existing) != 0 {
					t.Errorf("web pods joined a node whose pod repels them: %+v", r.Existing)
				}
			}},
		{name: "a running pod's zone anti-affinity repels new pods from its zone",
			snap: func() *scheduler.Snapshot {
				s := snapshot(pods(6, "web", "1", "1Gi"), pool("default"))
				s.Nodes = []*scheduler.StateNode{dbOn("node-b", "us-east-1b", podAffinity(true, 0, zoneKey, "web"))}
				return s
			},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				requireAllPlaced(t, s, r)
				if got := countBy(s, r, "web", zoneKey); got["us-east-1b"] != 0 || got[""] != 0 {
					t.Errorf("web pods by zone %v: none may be in us-east-1b or unpinned", got)
				}
			}},
		{name: "a running pod's anti-affinity in every zone leaves the pod unschedulable",
			snap: func() *scheduler.Snapshot {
				s := snapshot(pods(1, "web", "1", "1Gi"), pool("default"))
				for _, z := range allZones {
					s.Nodes = append(s.Nodes, existingNode("node-"+z, z, "8", pods(1, "db-"+z, "1", "1Gi", withLabel("app", "db"), podAffinity(true, 0, zoneKey, "web"))...))
				}
				return s
			},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				requireReason(t, r, 1, "nodepool default:")
			}},
		{name: "pending pods' hostname anti-affinity",
			snap: func() *scheduler.Snapshot {
				return snapshot(append(pods(3, "web", "1", "1Gi", podAffinity(true, 0, hostKey, "batch")), pods(3, "batch", "2", "1Gi")...), pool("default"))
			},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				requireAllPlaced(t, s, r)
				batchHosts := countBy(s, r, "batch", hostKey)
				for h := range countBy(s, r, "web", hostKey) {
					if batchHosts[h] > 0 {
						t.Errorf("a web pod shares %s with a batch pod", h)
					}
				}
			}},
		{name: "preferred hostname anti-affinity spreads, ignored it packs",
			snap: func() *scheduler.Snapshot {
				return snapshot(pods(4, "web", "250m", "256Mi", podAffinity(true, 10, hostKey, "web")), pool("default"))
			},
			opts: scheduler.Options{Preferences: scheduler.PreferencesRespect},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				requireAllPlaced(t, s, r)
				if len(r.NewNodeClaims) != 4 {
					t.Errorf("%d nodeclaims, want 4 (the preference can hold)", len(r.NewNodeClaims))
				}
				ignored := solve(t, s, scheduler.Options{Preferences: scheduler.PreferencesIgnore})
				if len(ignored.NewNodeClaims) != 1 {
					t.Errorf("%d nodeclaims with preferences ignored, want 1", len(ignored.NewNodeClaims))
				}
			}},
		{name: "preferred zone anti-affinity gives way past the zones",
			snap: func() *scheduler.Snapshot {
				return snapshot(pods(5, "web", "1", "1Gi", podAffinity(true, 10, zoneKey, "web")), pool("default"))
			},
			opts: scheduler.Options{Preferences: scheduler.PreferencesRespect},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				requireAllPlaced(t, s, r)
				if got := countBy(s, r, "web", zoneKey); len(got) < 3 {
					t.Errorf("web pods by zone %v: the first three can each have a zone", got)
				}
			}},
		{name: "preferred zone affinity to a running pod",
			snap: func() *scheduler.Snapshot {
				s := snapshot(pods(4, "web", "8", "1Gi", podAffinity(false, 10, zoneKey, "db")), pool("default"))
				s.Nodes = []*scheduler.StateNode{dbOn("node-c", "us-east-1c")}
				return s
			},
			opts: scheduler.Options{Preferences: scheduler.PreferencesRespect},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				requireAllPlaced(t, s, r)
				if got := countBy(s, r, "web", zoneKey); got["us-east-1c"] != 4 {
					t.Errorf("web pods by zone %v, want all in us-east-1c", got)
				}
			}},
		{name: "preferred hostname affinity to a pod that is not there is relaxed",
			snap: func() *scheduler.Snapshot {
				return snapshot(pods(2, "web", "1", "1Gi", podAffinity(false, 10, hostKey, "ghost")), pool("default"))
			},
			opts: scheduler.Options{Preferences: scheduler.PreferencesRespect},
			check: func(t *testing.T, s *scheduler.Snapshot, r *scheduler.Results) {
				requireAllPlaced(t, s, r)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.snap()
			tc.check(t, s, solve(t, s, tc.opts))
		})
	}
}

func TestRequests(t *testing.T) {
	always := ptr.To(corev1.ContainerRestartPolicyAlways)
	ctr := func(name, cpu, mem string) corev1.Container {
		return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}}
	}
	sidecar := func(name, cpu, mem string) corev1.Container {
		c := ctr(name, cpu, mem)
		c.RestartPolicy = always
		return c
	}
	inits := func(cs ...corev1.Container) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Spec.InitContainers = cs }
	}
	overhead := func(cpu, mem string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
		}
	}
	const mi = int64(1) << 20
	for _, tc := range []struct {
		name    string
		mutate  []func(*corev1.Pod)
		wantCPU int64 // millicores for the pod, containers being 1 cpu / 1Gi
		wantMem int64
	}{
		{"containers only", nil, 1000, 1024 * mi},
		{"an init container larger than the containers", []func(*corev1.Pod){inits(ctr("init", "3", "512Mi"))}, 3000, 1024 * mi},
		{"init containers run one at a time", []func(*corev1.Pod){inits(ctr("a", "2", "2Gi"), ctr("b", "1500m", "3Gi"))}, 2000, 3072 * mi},
		{"sidecars add to the containers", []func(*corev1.Pod){inits(sidecar("proxy", "500m", "256Mi"))}, 1500, 1280 * mi},
		{"an init container after a sidecar runs beside it", []func(*corev1.Pod){inits(sidecar("proxy", "500m", "256Mi"), ctr("migrate", "2", "1Gi"))}, 2500, 1280 * mi},
		{"an init container before a sidecar runs alone", []func(*corev1.Pod){inits(ctr("migrate", "2", "1Gi"), sidecar("proxy", "500m", "256Mi"))}, 2000, 1280 * mi},
		{"pod overhead is added", []func(*corev1.Pod){overhead("250m", "128Mi")}, 1250, 1152 * mi},
		{"all of them", []func(*corev1.Pod){inits(sidecar("proxy", "500m", "256Mi"), ctr("migrate", "4", "512Mi")), overhead("100m", "64Mi")}, 4600, 1344 * mi},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := snapshot(pods(1, "app", "1", "1Gi", tc.mutate...), pool("default"))
			r := solve(t, s, scheduler.Options{})
			requireAllPlaced(t, s, r)
			if len(r.NewNodeClaims) != 1 {
				t.Fatalf("%d nodeclaims, want 1", len(r.NewNodeClaims))
			}
			nc := r.NewNodeClaims[0]
			if nc.Requests.CPU != tc.wantCPU || nc.Requests.Memory != tc.wantMem || nc.Requests.Pods != 1 {
				t.Errorf("claim requests cpu %dm memory %dMi pods %d, want %dm %dMi 1", nc.Requests.CPU, nc.Requests.Memory/mi, nc.Requests.Pods, tc.wantCPU, tc.wantMem/mi)
			}
		})
	}

	// A pod whose init container needs 5 cpu cannot share a 4-cpu existing node
	// though its containers ask for 1.
	t.Run("init peak decides what fits on an existing node", func(t *testing.T) {
		s := snapshot(pods(1, "app", "1", "1Gi", inits(ctr("init", "5", "1Gi"))), pool("default"))
		s.Nodes = []*scheduler.StateNode{existingNode("node-a", "us-east-1a", "4")}
		r := solve(t, s, scheduler.Options{})
		requireAllPlaced(t, s, r)
		if len(r.Existing) != 0 {
			t.Errorf("pod placed on the 4-cpu node: %+v", r.Existing)
		}
	})
}

func TestExtendedAndEphemeralRequests(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      int
		mutate []func(*corev1.Pod)
		pool   []func(*v1alpha1.NodePool)
		// resource every listed type must offer at least per pod; "" to skip
		resource corev1.ResourceName
		claims   int
		// reason fragments when the pods are unschedulable
		reason []string
	}{
		{name: "ephemeral-storage fits one pod per node", n: 2, mutate: []func(*corev1.Pod){request(corev1.ResourceEphemeralStorage, "10Gi")},
			resource: corev1.ResourceEphemeralStorage, claims: 2},
		{name: "ephemeral-storage beyond any node", n: 1, mutate: []func(*corev1.Pod){request(corev1.ResourceEphemeralStorage, "30Gi")},
			reason: []string{"nodepool default: no instance type offers 30Gi ephemeral-storage in zones [us-east-1a us-east-1b us-east-1c]"}},
		{name: "nvidia.com/gpu", n: 2, mutate: []func(*corev1.Pod){request("nvidia.com/gpu", "1")}, resource: "nvidia.com/gpu", claims: 2},
		{name: "nvidia.com/gpu shared by pods", n: 4, mutate: []func(*corev1.Pod){request("nvidia.com/gpu", "2")},
			pool: []func(*v1alpha1.NodePool){require(corev1.LabelInstanceTypeStable, "In", "g5.12xlarge")}, resource: "nvidia.com/gpu", claims: 2},
		{name: "aws.amazon.com/neuron", n: 1, mutate: []func(*corev1.Pod){request("aws.amazon.com/neuron", "6")}, resource: "aws.amazon.com/neuron", claims: 1},
		{name: "nvidia.com/gpu beyond the allowed zone's types", n: 1,
			mutate: []func(*corev1.Pod){request("nvidia.com/gpu", "16"), selectNode(zoneKey, "us-east-1b")},
			pool:   []func(*v1alpha1.NodePool){require(v1alpha1.LabelInstanceFamily, "In", "g5", "g6")},
			reason: []string{"nodepool gpu-inference: no instance type offers 16 nvidia.com/gpu in zones [us-east-1b]"}},
		{name: "aws.amazon.com/neuron beyond the allowed zones' types", n: 1,
			mutate: []func(*corev1.Pod){request("aws.amazon.com/neuron", "32")},
			pool:   []func(*v1alpha1.NodePool){require(zoneKey, "In", "us-east-1a", "us-east-1c")},
			reason: []string{"nodepool gpu-inference: no instance type offers 32 aws.amazon.com/neuron in zones [us-east-1a us-east-1c]"}},
		{name: "nvidia.com/gpu where the pool allows no gpu type", n: 1, mutate: []func(*corev1.Pod){request("nvidia.com/gpu", "1")},
			pool:   []func(*v1alpha1.NodePool){require(v1alpha1.LabelInstanceFamily, "In", "c6i")},
			reason: []string{"nodepool gpu-inference: no instance type offers 1 nvidia.com/gpu in zones [us-east-1a us-east-1b us-east-1c]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "default"
			if tc.pool != nil || len(tc.reason) > 0 && !strings.Contains(tc.reason[0], "default") {
				name = "gpu-inference"
			}
			s := snapshot(pods(tc.n, "app", "1", "1Gi", tc.mutate...), pool(name, tc.pool...))
			r := solve(t, s, scheduler.Options{})
			if len(tc.reason) > 0 {
				requireReason(t, r, tc.n, tc.reason...)
				return
			}
			requireAllPlaced(t, s, r)
			if len(r.NewNodeClaims) != tc.claims {
				t.Errorf("%d nodeclaims, want %d", len(r.NewNodeClaims), tc.claims)
			}
			per := s.Pods[0].Spec.Containers[0].Resources.Requests[tc.resource]
			for _, nc := range r.NewNodeClaims {
				want := per.Value() * int64(len(nc.Pods))
				if nc.Requests.Get(tc.resource) != want {
					t.Errorf("%s requests %d %s, want %d", nc.Name, nc.Requests.Get(tc.resource), tc.resource, want)
				}
				for _, it := range nc.InstanceTypes {
					if got := it.Allocatable().Get(tc.resource); got < want {
						t.Errorf("%s lists %s with %d %s, fewer than its pods' %d", nc.Name, it.Name, got, tc.resource, want)
					}
				}
			}
		})
	}
}

func TestCapacityTypeOrder(t *testing.T) {
	const (
		reserved = v1alpha1.CapacityTypeReserved
		spot     = v1alpha1.CapacityTypeSpot
		od       = v1alpha1.CapacityTypeOnDemand
	)
	// types offers one 4-vCPU type with the given prices per capacity type
	// (negative: unavailable), in one zone.
	types := func(prices map[string]float64) []*cloudprovider.InstanceType {
		var ofs cloudprovider.Offerings
		for _, ct := range []string{od, spot, reserved} {
			if p, ok := prices[ct]; ok {
				ofs = append(ofs, cloudprovider.Offering{Zone: "test-zone-1", CapacityType: ct, Price: max(p, 0), Available: p >= 0})
			}
		}
		return []*cloudprovider.InstanceType{schedulertest.NewInstanceType("a-4", 4, 16<<30, 110, ofs)}
	}
	usual := map[string]float64{reserved: 0, spot: 0.06, od: 0.2}
	for _, tc := range []struct {
		name   string
		prices map[string]float64
		allow  []string // the pool's capacity types; nil allows every one
		want   string
	}{
		{"reserved first when allowed", usual, nil, reserved},
		{"reserved, spot and on-demand allowed explicitly", usual, []string{od, spot, reserved}, reserved},
		{"spot when reserved is not allowed", usual, []string{spot, od}, spot},
		{"on-demand when only it is allowed", usual, []string{od}, od},
		{"reserved over on-demand", usual, []string{reserved, od}, reserved},
		{"spot when the reservation is used up", map[string]float64{reserved: -1, spot: 0.06, od: 0.2}, nil, spot},
		{"on-demand when spot is short", map[string]float64{reserved: -1, spot: -1, od: 0.2}, nil, od},
		{"at equal prices reserved, then spot, then on-demand", map[string]float64{reserved: 0.1, spot: 0.1, od: 0.1}, nil, reserved},
		{"at equal prices spot before on-demand", map[string]float64{spot: 0.1, od: 0.1}, nil, spot},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := schedulertest.Snapshot(pods(2, "app", "1", "1Gi"), types(tc.prices))
			if tc.allow != nil {
				require(ctKey, "In", tc.allow...)(s.NodePools[0])
			}
			r := solve(t, s, scheduler.Options{})
			requireAllPlaced(t, s, r)
			for _, nc := range r.NewNodeClaims {
				if nc.Offering.CapacityType != tc.want {
					t.Errorf("%s launches %s, want %s", nc.Name, nc.Offering.CapacityType, tc.want)
				}
			}
		})
	}
	t.Run("unschedulable when the only allowed capacity type is short", func(t *testing.T) {
		s := schedulertest.Snapshot(pods(1, "app", "1", "1Gi"), types(map[string]float64{reserved: -1, spot: 0.06, od: 0.2}))
		require(ctKey, "In", reserved)(s.NodePools[0])
		r := solve(t, s, scheduler.Options{})
		requireReason(t, r, 1, "nodepool default:", "offering")
	})
}

// TestSpreadsDoNotCountTerminatingPods: kube-scheduler's spreads skip a pod
// being deleted, and its required anti-affinity does not. Zone a holds two
// web pods, both terminating: a zone spread sends the next pod there, and a
// hostname anti-affinity still keeps it off their node.
func TestSpreadsDoNotCountTerminatingPods(t *testing.T) {
	leaving := func(p *corev1.Pod) {
		p.DeletionTimestamp = &metav1.Time{Time: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
	}
	nodes := func() []*scheduler.StateNode {
		return []*scheduler.StateNode{
			existingNode("node-a", "us-east-1a", "32", pods(2, "old-a", "1", "1Gi", withLabel("app", "web"), leaving)...),
			existingNode("node-a2", "us-east-1a", "32"),
			existingNode("node-b", "us-east-1b", "32", pods(1, "old-b", "1", "1Gi", withLabel("app", "web"))...),
			existingNode("node-c", "us-east-1c", "32", pods(1, "old-c", "1", "1Gi", withLabel("app", "web"))...),
		}
	}
	s := snapshot(pods(1, "web", "1", "1Gi", spreadBy(zoneKey, 1, corev1.DoNotSchedule)))
	s.Nodes = nodes()
	r := solve(t, s, scheduler.Options{})
	requireAllPlaced(t, s, r)
	if got := nodeOf(r)["web-000"]; got != "node-a" && got != "node-a2" {
		t.Errorf("the spread placed the pod on %s, want zone a, whose pods are all terminating", got)
	}
	s = snapshot(pods(1, "web", "1", "1Gi", spreadBy(zoneKey, 1, corev1.DoNotSchedule), podAffinity(true, 0, hostKey, "web")))
	s.Nodes = nodes()
	r = solve(t, s, scheduler.Options{})
	requireAllPlaced(t, s, r)
	if got := nodeOf(r)["web-000"]; got != "node-a2" {
		t.Errorf("placed on %s, want node-a2: node-a's terminating pods still count for anti-affinity", got)
	}
}
