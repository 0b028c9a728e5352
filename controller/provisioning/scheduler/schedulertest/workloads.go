// Package schedulertest builds the public benchmark workloads and catalogues of
// ../shared/bench/WORKLOADS.md exactly, plus the fractional lower bound the
// benchmarks compare cost against.
package schedulertest

import (
	"fmt"
	"math/rand"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Seed is the seed every workload instance starts from.
const Seed = 42

// Topology keys and label keys the workloads use.
const (
	LabelKey         = "my-label"
	AffinityLabelKey = "my-affininity" // sic, as WORKLOADS.md spells it
	zoneKey          = corev1.LabelTopologyZone
	hostnameKey      = corev1.LabelHostname
)

// draws holds the workload's random stream and its three draws.
type draws struct{ r *rand.Rand }

func newDraws() draws { return draws{r: rand.New(rand.NewSource(Seed))} }

func (d draws) label() string { return []string{"a", "b", "c", "d", "e", "f", "g"}[d.r.Intn(7)] }
func (d draws) cpu() int64    { return []int64{100, 250, 500, 1000, 1500}[d.r.Intn(5)] }
func (d draws) mem() int64    { return []int64{100, 256, 512, 1024, 2048, 4096}[d.r.Intn(6)] }

// W1 is "diverse-N": five constraint groups of N/5 pods each, then generic pods
// up to n, drawn from a fresh seed-42 generator in the order WORKLOADS.md gives.
func W1(n int) []*corev1.Pod {
	d, q := newDraws(), n/5
	pods := make([]*corev1.Pod, 0, n)
	add := func(p *corev1.Pod) {
		p.Name = fmt.Sprintf("diverse-%05d", len(pods))
		p.UID = types.UID(p.Name)
		pods = append(pods, p)
	}
	for range q {
		add(genericPod(d))
	}
	for _, key := range []string{zoneKey, hostnameKey} {
		for range q {
			add(spreadPod(d, key))
		}
	}
	for range q {
		add(selfAffinityPod(d))
	}
	for range q {
		add(antiAffinityPod(d))
	}
	for range n - 5*q {
		add(genericPod(d))
	}
	return pods
}

func genericPod(d draws) *corev1.Pod {
	labels := map[string]string{LabelKey: d.label()}
	return newPod(labels, d.cpu(), d.mem())
}

func spreadPod(d draws, key string) *corev1.Pod {
	labels := map[string]string{LabelKey: d.label()}
	v2 := d.label()
	p := newPod(labels, d.cpu(), d.mem())
	p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
		MaxSkew: 1, TopologyKey: key, WhenUnsatisfiable: corev1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelKey: v2}},
	}}
	return p
}

func selfAffinityPod(d draws) *corev1.Pod {
	v := d.label()
	p := newPod(map[string]string{AffinityLabelKey: v}, d.cpu(), d.mem())
	p.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term(AffinityLabelKey, v, zoneKey)},
	}}
	return p
}

func antiAffinityPod(d draws) *corev1.Pod {
	p := newPod(map[string]string{"app": "nginx"}, d.cpu(), d.mem())
	p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term("app", "nginx", hostnameKey)},
	}}
	return p
}

func term(key, value, topologyKey string) corev1.PodAffinityTerm {
	return corev1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{key: value}},
		TopologyKey:   topologyKey,
	}
}

// W3 is "preferences-4000": identical app=nginx pods preferring zone test-zone-1
// and preferring to avoid each other per zone (weight 10) and per host (weight 1).
func W3() []*corev1.Pod {
	d := newDraws()
	cpu, mem := d.cpu(), d.mem()
	pods := make([]*corev1.Pod, 0, 4000)
	for i := range 4000 {
		p := newPod(map[string]string{"app": "nginx"}, cpu, mem)
		p.Name = fmt.Sprintf("preferences-%04d", i)
		p.UID = types.UID(p.Name)
		p.Spec.Affinity = w3Affinity()
		pods = append(pods, p)
	}
	return pods
}

func w3Affinity() *corev1.Affinity {
	return &corev1.Affinity{
		NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
			Weight: 1,
			Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key: zoneKey, Operator: corev1.NodeSelectorOpIn, Values: []string{"test-zone-1"},
			}}},
		}}},
		PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
			{Weight: 10, PodAffinityTerm: term("app", "nginx", zoneKey)},
			{Weight: 1, PodAffinityTerm: term("app", "nginx", hostnameKey)},
		}},
	}
}

// newPod is a pending pod in namespace default with one container that only requests.
func newPod(labels map[string]string, milliCPU, memMiB int64) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:  "app",
			Image: "public.ecr.aws/eks-distro/kubernetes/pause:3.9",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU:    *resource.NewMilliQuantity(milliCPU, resource.DecimalSI),
				corev1.ResourceMemory: *resource.NewQuantity(memMiB<<20, resource.BinarySI),
			}},
		}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
}
