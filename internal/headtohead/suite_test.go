package headtohead_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/internal/headtohead"
)

// TestSuiteHasThePublishedPodCounts checks each phase's pod total against
// the counts the performance suite asserts (its reports' TotalPods).
func TestSuiteHasThePublishedPodCounts(t *testing.T) {
	want := map[string][]int32{
		"basic": {1000, 700}, "hostname-spread": {1000, 700}, "hostname-spread-xl": {2000, 1400},
		"interference": {500, 750, 600}, "do-not-disrupt": {1100, 600}, "wide-deployments": {1000, 700}, "drift": {600, 600},
	}
	suite := headtohead.Suite()
	if len(suite) != len(want) {
		t.Fatalf("the suite has %d cases, want %d", len(suite), len(want))
	}
	for _, c := range suite {
		replicas := map[string]int32{}
		for i, p := range c.Phases {
			for name, n := range p.Replicas {
				replicas[name] = n
			}
			var total int32
			for _, n := range replicas {
				total += n
			}
			if i >= len(want[c.Name]) || total != want[c.Name][i] {
				t.Errorf("%s/%s ends with %d pods, want phase %d of %v", c.Name, p.Name, total, i, want[c.Name])
			}
		}
	}
}

func TestScaledRoundsUpSoThatNoWorkloadVanishes(t *testing.T) {
	c := headtohead.Suite()[4].Scaled(25) // do-not-disrupt: 500, 500, 100, then 250, 250
	if got := c.Phases[0].Replicas; got["small"] != 20 || got["protected"] != 4 {
		t.Errorf("scale-out scaled by 25 = %v, want small 20 and protected 4", got)
	}
	if got := c.Phases[1].Replicas["small"]; got != 10 {
		t.Errorf("scale-in small scaled by 25 = %d, want 10", got)
	}
	if headtohead.Suite()[4].Phases[0].Replicas["small"] != 500 {
		t.Error("Scaled changed the case it was called on")
	}
}

func TestViolationsNameEachMissedThreshold(t *testing.T) {
	th := headtohead.Thresholds{MaxTime: 2 * time.Minute, MinCPUUtil: 0.53, MinMemUtil: 0.65, MaxCPUCores: 0.5}
	r := headtohead.Result{Kind: headtohead.ScaleOut, TimeToRunning: 3 * time.Minute, CPUUtil: 0.6, MemUtil: 0.5,
		ControllerCPUSeconds: 60, Duration: 100 * time.Second}
	got := strings.Join(r.Violations(th), "; ")
	for _, want := range []string{"took 3m0s", "memory utilisation 0.500", "0.60 cores"} {
		if !strings.Contains(got, want) {
			t.Errorf("violations %q do not mention %q", got, want)
		}
	}
	if strings.Contains(got, "CPU utilisation") {
		t.Errorf("violations %q name a CPU utilisation above the floor", got)
	}
	r.Kind, r.Settle = headtohead.ScaleIn, time.Minute
	if got := r.Violations(headtohead.Thresholds{MaxTime: 2 * time.Minute}); len(got) != 0 {
		t.Errorf("a scale-in is timed to its settled fleet, got %v", got)
	}
}

func TestWorkloadsSpreadAndRepelOnlyTheirOwnPods(t *testing.T) {
	wide := headtohead.Suite()[5]
	d := wide.Workloads[0].Deployment(3) // anti-affine and zone-spread
	spec := d.Spec.Template.Spec
	if len(spec.TopologySpreadConstraints) != 1 || spec.TopologySpreadConstraints[0].TopologyKey != corev1.LabelTopologyZone {
		t.Errorf("wide-1 spreads %v, want over zones only", spec.TopologySpreadConstraints)
	}
	term := spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0]
	if term.TopologyKey != corev1.LabelHostname || term.LabelSelector.MatchLabels["app"] != "wide-1" {
		t.Errorf("wide-1's anti-affinity is %+v, want its own pods on hostname", term)
	}
	d = wide.Workloads[3].Deployment(3)
	if n := len(d.Spec.Template.Spec.TopologySpreadConstraints); n != 2 || d.Spec.Template.Spec.Affinity != nil {
		t.Errorf("wide-4 has %d spreads and affinity %v, want zone and hostname spreads and none", n, d.Spec.Template.Spec.Affinity)
	}
	protected := headtohead.Suite()[4].Workloads[2].Deployment(1)
	if protected.Spec.Template.Annotations["karpenter.sh/do-not-disrupt"] != "true" {
		t.Errorf("the protected workload's pods are annotated %v", protected.Spec.Template.Annotations)
	}
}
