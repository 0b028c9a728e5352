package scenariogen

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/simulate"
)

// maxWorkloads is how many workloads a scenario has at most.
const maxWorkloads = 5

// workload writes the i-th workload, a Deployment or a Job, sized for one
// pool's types, with drawn constraints.
func (g *gen) workload(i int, deployment bool) {
	p := pick(g, g.pools)
	name := fmt.Sprintf("w%d", i)
	ns := pick(g, []string{"default", "default", "team-a"})
	labels := map[string]string{"app": name}
	spec := corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](0),
		Containers: []corev1.Container{{Name: "app", Image: "registry.example.com/" + name + ":1",
			Resources: corev1.ResourceRequirements{Requests: g.requests(p)}}},
	}
	g.constrain(&spec, p, labels)
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec}
	room := max(1, (g.o.MaxPods-g.pods)/max(1, maxWorkloads-i))
	if p.kind == kindGPU {
		room = min(room, 8)
	}
	wl := simulate.Workload{Tier: p.kind}
	if deployment || g.chance(0.6) {
		wl.Deployment = ns + "/" + name
		wl.Replicas = g.curve(room)
		g.s.Deployments = append(g.s.Deployments, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl},
		})
	} else {
		wl.Job = ns + "/" + name
		parallelism := int32(1 + g.rng.IntN(min(room, 10)))
		completions := parallelism * int32(1+g.rng.IntN(3))
		wl.At = dur(g.within(0, g.s.Spec.Duration.Duration/2))
		wl.RunFor = dur(time.Duration(2+g.rng.IntN(28)) * time.Minute)
		tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
		g.s.Jobs = append(g.s.Jobs, &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       batchv1.JobSpec{Parallelism: &parallelism, Completions: &completions, Template: tmpl},
		})
		room = int(parallelism)
	}
	g.pods += room
	g.s.Spec.Workloads = append(g.s.Spec.Workloads, wl)
}

// requests sizes a pod for one of the pool's types: a share of its CPU and
// memory, and of its GPUs when it has some.
func (g *gen) requests(p *poolPlan) corev1.ResourceList {
	ref := p.types[g.rng.IntN(len(p.types))]
	frac := func() float64 { return 0.05 + 0.55*g.rng.Float64() }
	cpu := max(50, int64(float64(ref.VCPU*1000)*frac())/50*50)
	mem := max(64, int64(float64(ref.MemoryMiB)*frac())/64*64)
	out := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(cpu, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(mem<<20, resource.BinarySI),
	}
	if ref.GPUCount > 0 && (p.kind == kindGPU || g.chance(0.5)) {
		out["nvidia.com/gpu"] = *resource.NewQuantity(1+g.rng.Int64N(ref.GPUCount), resource.DecimalSI)
	}
	return out
}

// curve draws a Deployment's replica curve: up to four points, steps or
// ramps, up to room replicas, scaling to zero now and then.
func (g *gen) curve(room int) []simulate.ReplicaPoint {
	end := g.s.Spec.Duration.Duration
	at := g.within(0, 10*time.Minute)
	var out []simulate.ReplicaPoint
	for range 1 + g.rng.IntN(4) {
		if at >= end {
			break
		}
		count := int32(g.rng.IntN(room + 1))
		if len(out) == 0 {
			count = int32(1 + g.rng.IntN(room))
		}
		pt := simulate.ReplicaPoint{At: dur(at), Count: count}
		if g.chance(0.4) {
			pt.Over = dur(g.within(10*time.Second, 5*time.Minute))
		}
		out = append(out, pt)
		at += g.within(5*time.Minute, max(end/2, 6*time.Minute))
	}
	return out
}

// constrain draws the pod's constraints: tolerations, node selectors, node
// affinity, pod affinity and anti-affinity, topology spreads.
func (g *gen) constrain(spec *corev1.PodSpec, p *poolPlan, labels map[string]string) {
	g.tolerate(spec, p)
	if g.chance(0.35) {
		spec.NodeSelector = g.selector(p)
	}
	aff := &corev1.Affinity{}
	if g.chance(0.25) {
		aff.NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{g.nodeExpression(p)}}}}}
	}
	if g.chance(0.25) {
		if aff.NodeAffinity == nil {
			aff.NodeAffinity = &corev1.NodeAffinity{}
		}
		aff.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = []corev1.PreferredSchedulingTerm{{
			Weight: int32(1 + g.rng.IntN(100)), Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{g.nodeExpression(p)}}}}
	}
	g.podAffinity(aff, labels)
	if aff.NodeAffinity != nil || aff.PodAffinity != nil || aff.PodAntiAffinity != nil {
		spec.Affinity = aff
	}
	g.spread(spec, labels)
}

// tolerate tolerates the pool's taint, or every taint now and then.
func (g *gen) tolerate(spec *corev1.PodSpec, p *poolPlan) {
	switch {
	case g.chance(0.1):
		spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	case p.taint != nil:
		spec.Tolerations = []corev1.Toleration{{Key: p.taint.Key, Operator: corev1.TolerationOpEqual, Value: p.taint.Value, Effect: p.taint.Effect}}
	}
}

// selector picks one node label the pool's nodes carry.
func (g *gen) selector(p *poolPlan) map[string]string {
	switch g.rng.IntN(5) {
	case 0:
		return map[string]string{labelPool: p.np.Name}
	case 1:
		return map[string]string{labelTier: p.kind}
	case 2:
		return map[string]string{"stowage.dev/capacity-type": pick(g, p.cts)}
	case 3:
		return map[string]string{corev1.LabelArchStable: p.types[0].Arch}
	default:
		return map[string]string{corev1.LabelTopologyZone: pick(g, p.zones)}
	}
}

// nodeExpression is one expression some of the pool's nodes satisfy.
func (g *gen) nodeExpression(p *poolPlan) corev1.NodeSelectorRequirement {
	switch g.rng.IntN(4) {
	case 0:
		return corev1.NodeSelectorRequirement{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: some(g, p.zones, 1, len(p.zones))}
	case 1:
		return corev1.NodeSelectorRequirement{Key: "stowage.dev/capacity-type", Operator: corev1.NodeSelectorOpIn, Values: some(g, p.cts, 1, len(p.cts))}
	case 2:
		return corev1.NodeSelectorRequirement{Key: "stowage.dev/instance-family", Operator: corev1.NodeSelectorOpIn, Values: []string{pick(g, p.types).Family}}
	default:
		return corev1.NodeSelectorRequirement{Key: "stowage.dev/capacity-type", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"reserved"}}
	}
}

// podAffinity draws affinity and anti-affinity to the workload's own pods,
// or to the first workload's.
func (g *gen) podAffinity(aff *corev1.Affinity, labels map[string]string) {
	self := &metav1.LabelSelector{MatchLabels: map[string]string{"app": labels["app"]}}
	term := func(key string, sel *metav1.LabelSelector) corev1.PodAffinityTerm {
		return corev1.PodAffinityTerm{LabelSelector: sel, TopologyKey: key}
	}
	anti := &corev1.PodAntiAffinity{}
	switch x := g.rng.Float64(); {
	case x < 0.15:
		anti.RequiredDuringSchedulingIgnoredDuringExecution = []corev1.PodAffinityTerm{term(corev1.LabelHostname, self)}
	case x < 0.25:
		anti.PreferredDuringSchedulingIgnoredDuringExecution = []corev1.WeightedPodAffinityTerm{{Weight: 50, PodAffinityTerm: term(corev1.LabelTopologyZone, self)}}
	case x < 0.30:
		anti.RequiredDuringSchedulingIgnoredDuringExecution = []corev1.PodAffinityTerm{term(corev1.LabelTopologyZone, self)}
	default:
		anti = nil
	}
	aff.PodAntiAffinity = anti
	podAff := &corev1.PodAffinity{}
	switch x := g.rng.Float64(); {
	case x < 0.05:
		podAff.RequiredDuringSchedulingIgnoredDuringExecution = []corev1.PodAffinityTerm{term(corev1.LabelTopologyZone, self)}
	case x < 0.13:
		first := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "w0"}}
		podAff.PreferredDuringSchedulingIgnoredDuringExecution = []corev1.WeightedPodAffinityTerm{{Weight: 30, PodAffinityTerm: term(corev1.LabelHostname, first)}}
	default:
		podAff = nil
	}
	aff.PodAffinity = podAff
}

// spread draws topology spreads over zones, hostnames and capacity types,
// with both whenUnsatisfiable values.
func (g *gen) spread(spec *corev1.PodSpec, labels map[string]string) {
	self := &metav1.LabelSelector{MatchLabels: map[string]string{"app": labels["app"]}}
	for _, c := range []struct {
		key        string
		p, hard    float64
		maxSkewTop int
	}{{corev1.LabelTopologyZone, 0.25, 0.7, 2}, {corev1.LabelHostname, 0.2, 0.2, 1}, {"stowage.dev/capacity-type", 0.1, 0.5, 2}} {
		if !g.chance(c.p) {
			continue
		}
		when := corev1.ScheduleAnyway
		if g.chance(c.hard) {
			when = corev1.DoNotSchedule
		}
		spec.TopologySpreadConstraints = append(spec.TopologySpreadConstraints, corev1.TopologySpreadConstraint{
			MaxSkew: int32(1 + g.rng.IntN(c.maxSkewTop)), TopologyKey: c.key, WhenUnsatisfiable: when, LabelSelector: self})
	}
}
