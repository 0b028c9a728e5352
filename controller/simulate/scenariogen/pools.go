package scenariogen

import (
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// Pool kinds: which families a pool draws from.
const (
	kindGeneral   = "general"
	kindArm       = "arm"
	kindBurstable = "burstable"
	kindGPU       = "gpu"
)

// families are the catalogue's families by pool kind.
var families = map[string][]string{
	kindGeneral:   {"c6i", "c7i", "m6i", "m7i", "r6i", "r7i"},
	kindArm:       {"c6g", "c7g", "m6g", "m7g", "r7g"},
	kindBurstable: {"t3"},
	kindGPU:       {"g5", "g6", "g6e", "p4d", "p5"},
}

// Node labels the generator's pools set, which workloads select on.
const (
	labelPool = "example.com/pool"
	labelTier = "example.com/tier"
	gpuTaint  = "nvidia.com/gpu"
	roleName  = "StowageNodeRole"
)

// poolPlan is a pool written and what it allows.
type poolPlan struct {
	np    *v1alpha1.NodePool
	kind  string
	types []catalogue.Info
	cts   []string
	zones []string
	taint *corev1.Taint
}

// nodeClasses writes the general NodeClass and the GPU one.
func (g *gen) nodeClasses() {
	tags := map[string]string{"stowage.dev/discovery": g.s.Name}
	for _, name := range []string{"general", "gpu"} {
		alias := "al2023@latest"
		if name == "general" && g.chance(0.5) {
			alias = "bottlerocket@latest"
		}
		g.s.NodeClasses = append(g.s.NodeClasses, &v1alpha1.NodeClass{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.NodeClassSpec{
				AMISelectorTerms:           []v1alpha1.AMISelectorTerm{{Alias: alias}},
				SubnetSelectorTerms:        []v1alpha1.SelectorTerm{{Tags: tags}},
				SecurityGroupSelectorTerms: []v1alpha1.SecurityGroupSelectorTerm{{Tags: tags}},
				Role:                       roleName,
			},
		})
	}
}

// pool writes the i-th NodePool.
func (g *gen) pool(i int) {
	kind := pick(g, []string{kindGeneral, kindGeneral, kindGeneral, kindArm, kindBurstable, kindGPU, kindGPU})
	p := &poolPlan{kind: kind, cts: pick(g, [][]string{{"spot"}, {"on-demand"}, {"spot", "on-demand"}}), zones: g.zones}
	if kind == kindGPU && g.chance(0.7) {
		p.cts = []string{"on-demand"}
	}
	name := fmt.Sprintf("%s-%d", kind, i)
	class := "general"
	if kind == kindGPU {
		class = "gpu"
	}
	np := &v1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}
	np.Spec.Template.ObjectMeta.Labels = map[string]string{labelPool: name, labelTier: kind}
	np.Spec.Template.Spec.NodeClassRef = &v1alpha1.NodeClassReference{Group: v1alpha1.Group, Kind: v1alpha1.DefaultNodeClassKind, Name: class}
	placement := []v1alpha1.NodeSelectorRequirementWithMinValues{req(v1alpha1.LabelCapacityType, v1alpha1.OperatorIn, p.cts...)}
	if g.chance(0.25) {
		p.zones = some(g, g.zones, 1, len(g.zones)-1)
		placement = append(placement, req(corev1.LabelTopologyZone, v1alpha1.OperatorIn, p.zones...))
	}
	np.Spec.Template.Spec.Requirements = append(g.typeRequirements(kind), placement...)
	if p.types = g.allowed(np); len(p.types) == 0 {
		// The draws ruled every type out (a CPU bound below the family's
		// smallest): fall back to the families alone.
		np.Spec.Template.Spec.Requirements = append(g.familyRequirement(kind), placement...)
		p.types = g.allowed(np)
	}
	p.np = np
	g.taint(p)
	g.limits(p)
	g.disruption(p)
	if g.chance(0.5) {
		np.Spec.Weight = ptr.To(int32(1 + g.rng.IntN(100)))
	}
	g.s.NodePools = append(g.s.NodePools, np)
	g.pools = append(g.pools, p)
}

func req(key, op string, values ...string) v1alpha1.NodeSelectorRequirementWithMinValues {
	return v1alpha1.NodeSelectorRequirementWithMinValues{Key: key, Operator: op, Values: values}
}

func (g *gen) familyRequirement(kind string) []v1alpha1.NodeSelectorRequirementWithMinValues {
	return []v1alpha1.NodeSelectorRequirementWithMinValues{req(v1alpha1.LabelInstanceFamily, v1alpha1.OperatorIn, some(g, families[kind], 1, 3)...)}
}

// typeRequirements draws which types a pool allows, in one of the ways
// pools are written: by family, by a list of types, by category and
// generation, with or without a CPU bound.
func (g *gen) typeRequirements(kind string) []v1alpha1.NodeSelectorRequirementWithMinValues {
	switch g.rng.IntN(4) {
	case 0:
		var names []string
		for _, info := range g.catalogueOf(some(g, families[kind], 1, 2)) {
			names = append(names, info.Name)
		}
		return []v1alpha1.NodeSelectorRequirementWithMinValues{req(corev1.LabelInstanceTypeStable, v1alpha1.OperatorIn, some(g, names, 2, 6)...)}
	case 1:
		var cats []string
		for _, info := range g.catalogueOf(families[kind]) {
			if !slices.Contains(cats, info.Category) {
				cats = append(cats, info.Category)
			}
		}
		return []v1alpha1.NodeSelectorRequirementWithMinValues{
			req(v1alpha1.LabelInstanceCategory, v1alpha1.OperatorIn, some(g, cats, 1, 2)...),
			req(v1alpha1.LabelInstanceFamily, v1alpha1.OperatorIn, families[kind]...),
			req(v1alpha1.LabelInstanceGeneration, v1alpha1.OperatorGte, "6")}
	case 2:
		return append(g.familyRequirement(kind),
			req(v1alpha1.LabelInstanceCPU, pick(g, []string{v1alpha1.OperatorLte, v1alpha1.OperatorLt}), strconv.Itoa(pick(g, []int{4, 8, 16, 32, 64}))))
	default:
		return g.familyRequirement(kind)
	}
}

// catalogueOf lists the catalogue's types of the families, by name.
func (g *gen) catalogueOf(fams []string) []catalogue.Info {
	var out []catalogue.Info
	for _, name := range g.cat.names {
		if slices.Contains(fams, g.cat.infos[name].Family) {
			out = append(out, g.cat.infos[name])
		}
	}
	return out
}

// allowed lists the catalogue types a pool's requirements allow, by name
// (the zones and capacity types are the pool's own to choose).
func (g *gen) allowed(np *v1alpha1.NodePool) []catalogue.Info {
	reqs := scheduling.FromAPI(np.Spec.Template.Spec.Requirements)
	var out []catalogue.Info
	for _, name := range g.cat.names {
		if allows(reqs, g.cat.labels[name]) {
			out = append(out, g.cat.infos[name])
		}
	}
	return out
}

// allows reports whether labels meet every requirement but the zone and the
// capacity type, which the labels leave open.
func allows(reqs scheduling.Requirements, labels map[string]string) bool {
	for _, key := range reqs.Keys() {
		if key == v1alpha1.LabelCapacityType || key == corev1.LabelTopologyZone {
			continue
		}
		v, ok := labels[key]
		if r := reqs.Get(key); (!ok && !r.AllowsAbsent()) || (ok && !r.Has(v)) {
			return false
		}
	}
	return true
}

// taint taints most GPU pools and some others; their workloads tolerate it.
func (g *gen) taint(p *poolPlan) {
	switch {
	case p.kind == kindGPU && g.chance(0.7):
		p.taint = &corev1.Taint{Key: gpuTaint, Value: "true", Effect: corev1.TaintEffectNoSchedule}
	case p.kind != kindGPU && g.chance(0.2):
		p.taint = &corev1.Taint{Key: "example.com/dedicated", Value: p.np.Name, Effect: corev1.TaintEffectNoSchedule}
	default:
		return
	}
	p.np.Spec.Template.Spec.Taints = []corev1.Taint{*p.taint}
}

// limits caps some pools: CPU in multiples of a mid-sized type, memory,
// nodes, GPUs; some so tight that one or two nodes fill them.
func (g *gen) limits(p *poolPlan) {
	if !g.chance(0.45) {
		return
	}
	mid := p.types[len(p.types)/2]
	nodes := int64(1 + g.rng.IntN(12))
	l := corev1.ResourceList{}
	switch g.rng.IntN(4) {
	case 0:
		l[corev1.ResourceMemory] = *resource.NewQuantity(nodes*mid.MemoryMiB<<20, resource.BinarySI)
	case 1:
		l["nodes"] = *resource.NewQuantity(nodes, resource.DecimalSI)
	default:
		l[corev1.ResourceCPU] = *resource.NewQuantity(nodes*mid.VCPU, resource.DecimalSI)
	}
	if p.kind == kindGPU && g.chance(0.5) {
		l["nvidia.com/gpu"] = *resource.NewQuantity(int64(8*(1+g.rng.IntN(4))), resource.DecimalSI)
	}
	p.np.Spec.Limits = l
}

// disruption draws the consolidation policy, its delay and budgets.
func (g *gen) disruption(p *poolPlan) {
	d := &p.np.Spec.Disruption
	if g.chance(0.5) {
		d.ConsolidationPolicy = pick(g, []string{v1alpha1.ConsolidationPolicyWhenEmpty, v1alpha1.ConsolidationPolicyWhenEmptyOrUnderutilized})
	}
	if g.chance(0.5) {
		after := v1alpha1.MustParseDuration(pick(g, []string{"0s", "30s", "1m", "5m", "Never"}))
		d.ConsolidateAfter = &after
	}
	if g.chance(0.3) {
		d.Budgets = []v1alpha1.Budget{{Nodes: pick(g, []string{"1", "10%", "50%", "100%"})}}
	}
}
