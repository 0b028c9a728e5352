package scenariogen

import (
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/simulate"
)

// daemonSets writes up to two small DaemonSets, some tolerating every
// taint, some only on one architecture.
func (g *gen) daemonSets() {
	for i := range g.rng.IntN(3) {
		name := fmt.Sprintf("agent-%d", i)
		labels := map[string]string{"app": name}
		spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "registry.example.com/" + name + ":1",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU:    *resource.NewMilliQuantity(int64(50*(1+g.rng.IntN(5))), resource.DecimalSI),
				corev1.ResourceMemory: *resource.NewQuantity(int64(64*(1+g.rng.IntN(8)))<<20, resource.BinarySI),
			}}}}}
		if g.chance(0.5) {
			spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
		}
		if g.chance(0.2) {
			spec.NodeSelector = map[string]string{corev1.LabelArchStable: "amd64"}
		}
		g.s.DaemonSets = append(g.s.DaemonSets, &appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name},
			Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec}},
		})
	}
}

// shortages writes up to three shortage windows on offerings the pools
// allow: none left, or a few, for a while or to the end.
func (g *gen) shortages() {
	end := g.s.Spec.Duration.Duration
	for range g.rng.IntN(4) {
		p := pick(g, g.pools)
		w := simulate.CapacityWindow{InstanceType: pick(g, p.types).Name, Zone: pick(g, p.zones), CapacityType: pick(g, p.cts),
			Available: g.rng.IntN(3), From: dur(g.within(0, end/2))}
		if g.chance(0.6) {
			w.Until = dur(w.From.Duration + g.within(5*time.Minute, end))
		}
		g.s.Spec.Capacity = append(g.s.Spec.Capacity, w)
	}
}

// interruptions draws a spot interruption rate (0.1 to 3 per instance-hour:
// 3 is a stress rate users replay) and scripted interruptions when some pool
// launches spot.
func (g *gen) interruptions() {
	if !slices.ContainsFunc(g.pools, func(p *poolPlan) bool { return slices.Contains(p.cts, "spot") }) {
		return
	}
	ix := &g.s.Spec.Interruptions
	if g.chance(0.5) {
		ix.SpotRatePerHour = float64(1+g.rng.IntN(30)) / 10
	}
	for range g.rng.IntN(3) {
		ix.Scripted = append(ix.Scripted, simulate.ScriptedInterruption{At: dur(g.within(time.Minute, g.s.Spec.Duration.Duration)),
			Zone: pick(g, append([]string{""}, g.zones...))})
	}
}
