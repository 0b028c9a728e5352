package scenariogen_test

import (
	"bytes"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/simulate"
	"github.com/stowage-dev/stowage/controller/simulate/scenariogen"
)

func generate(t *testing.T, seed int64) []byte {
	t.Helper()
	b, err := scenariogen.Marshal(scenariogen.Generate(seed, scenariogen.Options{}))
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	return b
}

func TestTheSameSeedWritesTheSameFile(t *testing.T) {
	if a, b := generate(t, 42), generate(t, 42); !bytes.Equal(a, b) {
		t.Error("seed 42 wrote two different files")
	}
	if a, b := generate(t, 42), generate(t, 43); bytes.Equal(a, b) {
		t.Error("seeds 42 and 43 wrote the same file")
	}
}

// TestGeneratedScenariosReadAndCoverEveryKind reads back the files of 300
// seeds, as `stowage simulate --scenario` would, and counts the kinds of
// pool, workload, constraint and event they hold: each must come up.
func TestGeneratedScenariosReadAndCoverEveryKind(t *testing.T) {
	seen := map[string]int{}
	for seed := int64(1); seed <= 200; seed++ {
		s, err := simulate.ReadScenario(bytes.NewReader(generate(t, seed)))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		count(s, seen)
	}
	for _, kind := range kinds {
		if seen[kind] == 0 {
			t.Errorf("no scenario of 200 has %s", kind)
		}
	}
	t.Logf("kinds over 200 seeds: %v", seen)
}

var kinds = []string{"pool", "pool weight", "cpu limit", "memory limit", "nodes limit", "nvidia.com/gpu limit", "tainted pool",
	"zone-restricted pool", "spot pool", "on-demand pool", "spot and on-demand pool", "arm pool", "burstable pool", "gpu pool",
	"deployment", "job", "replica ramp", "daemonset", "shortage window", "spot interruption rate", "spot interruption rate over 1.5 an hour", "scripted interruption",
	"gpu request", "node selector", "required node affinity", "preferred node affinity", "required pod affinity",
	"preferred pod affinity", "required anti-affinity", "preferred anti-affinity", "toleration", "tolerate everything",
	"spread topology.kubernetes.io/zone DoNotSchedule", "spread topology.kubernetes.io/zone ScheduleAnyway",
	"spread kubernetes.io/hostname DoNotSchedule", "spread kubernetes.io/hostname ScheduleAnyway",
	"spread stowage.dev/capacity-type DoNotSchedule", "spread stowage.dev/capacity-type ScheduleAnyway"}

func count(s *simulate.Scenario, seen map[string]int) {
	for _, np := range s.NodePools {
		seen["pool"]++
		if np.Spec.Weight != nil {
			seen["pool weight"]++
		}
		for rn := range np.Spec.Limits {
			seen[string(rn)+" limit"]++
		}
		if len(np.Spec.Template.Spec.Taints) > 0 {
			seen["tainted pool"]++
		}
		for _, r := range np.Spec.Template.Spec.Requirements {
			switch {
			case r.Key == corev1.LabelTopologyZone:
				seen["zone-restricted pool"]++
			case r.Key == "stowage.dev/capacity-type" && len(r.Values) == 2:
				seen["spot and on-demand pool"]++
			case r.Key == "stowage.dev/capacity-type":
				seen[r.Values[0]+" pool"]++
			}
		}
		seen[np.Spec.Template.ObjectMeta.Labels["example.com/tier"]+" pool"]++
	}
	for _, w := range s.Spec.Workloads {
		for _, p := range w.Replicas {
			if p.Over.Duration > 0 {
				seen["replica ramp"]++
			}
		}
	}
	seen["daemonset"] += len(s.DaemonSets)
	seen["shortage window"] += len(s.Spec.Capacity)
	seen["scripted interruption"] += len(s.Spec.Interruptions.Scripted)
	if s.Spec.Interruptions.SpotRatePerHour > 0 {
		seen["spot interruption rate"]++
	}
	if s.Spec.Interruptions.SpotRatePerHour > 1.5 {
		seen["spot interruption rate over 1.5 an hour"]++
	}
	for _, d := range s.Deployments {
		seen["deployment"]++
		countPod(&d.Spec.Template.Spec, seen)
	}
	for _, j := range s.Jobs {
		seen["job"]++
		countPod(&j.Spec.Template.Spec, seen)
	}
}

func countPod(p *corev1.PodSpec, seen map[string]int) {
	if _, ok := p.Containers[0].Resources.Requests["nvidia.com/gpu"]; ok {
		seen["gpu request"]++
	}
	if len(p.NodeSelector) > 0 {
		seen["node selector"]++
	}
	for _, tol := range p.Tolerations {
		if tol.Key == "" && tol.Operator == corev1.TolerationOpExists {
			seen["tolerate everything"]++
		} else {
			seen["toleration"]++
		}
	}
	for _, c := range p.TopologySpreadConstraints {
		seen["spread "+c.TopologyKey+" "+string(c.WhenUnsatisfiable)]++
	}
	a := p.Affinity
	if a == nil {
		return
	}
	if na := a.NodeAffinity; na != nil {
		if na.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			seen["required node affinity"]++
		}
		if len(na.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
			seen["preferred node affinity"]++
		}
	}
	if pa := a.PodAffinity; pa != nil {
		seen["required pod affinity"] += len(pa.RequiredDuringSchedulingIgnoredDuringExecution)
		seen["preferred pod affinity"] += len(pa.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	if pa := a.PodAntiAffinity; pa != nil {
		seen["required anti-affinity"] += len(pa.RequiredDuringSchedulingIgnoredDuringExecution)
		seen["preferred anti-affinity"] += len(pa.PreferredDuringSchedulingIgnoredDuringExecution)
	}
}
