// Package headtohead runs Karpenter's performance suite (the workloads of
// sigs.k8s.io/karpenter's test/suites/performance at the release
// build-components.sh builds) on the whole-system bed, once against the real
// Karpenter with its kwok cloud provider and once against Stowage, with the
// same instance types, the same registration delay and the same kwok, and
// measures each phase alike for both. The cases are written here from the
// suite's published shapes and thresholds; none of Karpenter's code is used.
package headtohead

import (
	"fmt"
	"math"
	"time"
)

// Workload is one Deployment of a case: its pods' requests and constraints.
type Workload struct {
	Name        string
	CPU, Memory string
	// HostnameSpread spreads the pods over nodes, maxSkew 1, DoNotSchedule.
	HostnameSpread bool
	// ZoneSpread spreads the pods over zones, maxSkew 1, DoNotSchedule.
	ZoneSpread bool
	// SelfAntiAffinity keeps two of its pods off one node (required).
	SelfAntiAffinity bool
	// DoNotDisrupt annotates the pods karpenter.sh/do-not-disrupt, which
	// both systems honour.
	DoNotDisrupt bool
}

// Kind is what a phase does, and so how it is measured.
type Kind string

// The kinds of phase.
const (
	// ScaleOut ends when every pod runs.
	ScaleOut Kind = "scale-out"
	// ScaleIn ends when every pod runs and the fleet has settled.
	ScaleIn Kind = "scale-in"
	// Drift changes the pool's template and ends when no node made from the
	// old one is left, every pod runs and the fleet has settled.
	Drift Kind = "drift"
)

// Phase is one step of a case: the replicas of the workloads it creates or
// scales (a workload named for the first time is created), or a drift.
type Phase struct {
	Name     string
	Kind     Kind
	Replicas map[string]int32
	// Thresholds are the suite's bounds for the phase.
	Thresholds Thresholds
}

// Thresholds are the suite's bounds on a phase (thresholds.go's defaults as
// each case passes them); a zero field is not checked.
type Thresholds struct {
	// MaxTime bounds the phase's time: to Running for a scale-out, to the
	// settled fleet otherwise.
	MaxTime time.Duration
	// MinCPUUtil and MinMemUtil bound the mean per-node utilisation from below.
	MinCPUUtil, MinMemUtil float64
	// MaxHeapMiB bounds Karpenter's 95th-percentile live heap; the bed
	// measures the peak resident set, which is larger.
	MaxHeapMiB float64
	// MaxCPUCores bounds the controller's mean CPU use over the phase.
	MaxCPUCores float64
}

// Case is one test of the suite.
type Case struct {
	Name      string
	Workloads []Workload
	Phases    []Phase
}

// The two workloads most cases use: 900m/3100Mi and 3500m/28Gi.
func small(name string) Workload { return Workload{Name: name, CPU: "900m", Memory: "3100Mi"} }
func large(name string) Workload { return Workload{Name: name, CPU: "3500m", Memory: "28Gi"} }

func spread(w Workload) Workload     { w.HostnameSpread = true; return w }
func antiAffine(w Workload) Workload { w.SelfAntiAffinity = true; return w }

// Suite is the performance suite's seven cases at full size.
func Suite() []Case {
	return []Case{
		{Name: "basic", Workloads: []Workload{small("small"), large("large")}, Phases: []Phase{
			{Name: "scale-out", Kind: ScaleOut, Replicas: map[string]int32{"small": 500, "large": 500},
				Thresholds: Thresholds{MaxTime: 2 * time.Minute, MinCPUUtil: 0.53, MinMemUtil: 0.65, MaxHeapMiB: 120, MaxCPUCores: 0.50}},
			{Name: "scale-in", Kind: ScaleIn, Replicas: map[string]int32{"small": 350, "large": 350},
				Thresholds: Thresholds{MaxTime: 20 * time.Minute, MaxHeapMiB: 140, MaxCPUCores: 0.25}},
		}},
		{Name: "hostname-spread", Workloads: []Workload{spread(small("small")), large("large")}, Phases: []Phase{
			{Name: "scale-out", Kind: ScaleOut, Replicas: map[string]int32{"small": 500, "large": 500},
				Thresholds: Thresholds{MaxTime: 5 * time.Minute, MinCPUUtil: 0.38, MinMemUtil: 0.40, MaxHeapMiB: 360, MaxCPUCores: 1.15}},
			{Name: "scale-in", Kind: ScaleIn, Replicas: map[string]int32{"small": 350, "large": 350},
				Thresholds: Thresholds{MaxTime: 30 * time.Minute, MinCPUUtil: 0.38, MinMemUtil: 0.40, MaxHeapMiB: 350, MaxCPUCores: 1.00}},
		}},
		{Name: "hostname-spread-xl", Workloads: []Workload{spread(small("small")), large("large")}, Phases: []Phase{
			{Name: "scale-out", Kind: ScaleOut, Replicas: map[string]int32{"small": 1000, "large": 1000},
				Thresholds: Thresholds{MaxTime: 35 * time.Minute, MinCPUUtil: 0.38, MinMemUtil: 0.40, MaxHeapMiB: 720, MaxCPUCores: 1.40}},
			{Name: "scale-in", Kind: ScaleIn, Replicas: map[string]int32{"small": 700, "large": 700},
				Thresholds: Thresholds{MaxTime: 35 * time.Minute, MinCPUUtil: 0.38, MinMemUtil: 0.40, MaxHeapMiB: 730, MaxCPUCores: 1.70}},
		}},
		{Name: "interference", Workloads: []Workload{antiAffine(small("small")), antiAffine(large("large"))}, Phases: []Phase{
			{Name: "scale-out", Kind: ScaleOut, Replicas: map[string]int32{"small": 500},
				Thresholds: Thresholds{MaxTime: 5 * time.Minute, MinCPUUtil: 0.38, MinMemUtil: 0.40, MaxHeapMiB: 310, MaxCPUCores: 0.90}},
			{Name: "interference", Kind: ScaleOut, Replicas: map[string]int32{"small": 250, "large": 500},
				Thresholds: Thresholds{MaxTime: 10 * time.Minute, MinCPUUtil: 0.38, MinMemUtil: 0.40, MaxHeapMiB: 590, MaxCPUCores: 1.30}},
			{Name: "scale-in", Kind: ScaleIn, Replicas: map[string]int32{"small": 400, "large": 200},
				Thresholds: Thresholds{MaxTime: 25 * time.Minute, MinCPUUtil: 0.38, MinMemUtil: 0.40, MaxHeapMiB: 540, MaxCPUCores: 0.80}},
		}},
		{Name: "do-not-disrupt", Workloads: []Workload{spread(small("small")), large("large"),
			{Name: "protected", CPU: "900m", Memory: "450Mi", DoNotDisrupt: true}}, Phases: []Phase{
			{Name: "scale-out", Kind: ScaleOut, Replicas: map[string]int32{"small": 500, "large": 500, "protected": 100},
				Thresholds: Thresholds{MaxTime: 4 * time.Minute, MinCPUUtil: 0.38, MinMemUtil: 0.40, MaxHeapMiB: 340, MaxCPUCores: 1.10}},
			{Name: "scale-in", Kind: ScaleIn, Replicas: map[string]int32{"small": 250, "large": 250},
				Thresholds: Thresholds{MaxTime: 35 * time.Minute, MinCPUUtil: 0.38, MinMemUtil: 0.40, MaxHeapMiB: 320, MaxCPUCores: 0.80}},
		}},
		wideDeployments(),
		{Name: "drift", Workloads: []Workload{spread(small("spread")), large("standard")}, Phases: []Phase{
			{Name: "scale-out", Kind: ScaleOut, Replicas: map[string]int32{"spread": 300, "standard": 300},
				Thresholds: Thresholds{MaxTime: 5 * time.Minute, MaxHeapMiB: 190, MaxCPUCores: 0.70}},
			{Name: "drift", Kind: Drift,
				Thresholds: Thresholds{MaxTime: 50 * time.Minute, MaxHeapMiB: 250, MaxCPUCores: 1.05}},
		}},
	}
}

// wideDeployments is thirty Deployments of varied requests, every one
// spread over zones, the first three also anti-affine on hostname and the
// next three also spread over hostnames: 1,000 pods, then 700.
func wideDeployments() Case {
	cpu := []string{"240m", "450m", "650m", "900m", "1400m", "1900m", "2400m", "2800m", "3300m", "3700m",
		"2300m", "900m", "1300m", "2800m", "1800m", "1850m", "3300m", "3800m", "225m", "450m",
		"700m", "900m", "1300m", "1800m", "2400m", "2800m", "3400m", "3800m", "3300m", "2800m"}
	mem := []string{"300Mi", "400Mi", "700Mi", "1Gi", "2Gi", "4Gi", "8Gi", "4Gi", "16Gi", "10Gi",
		"64Gi", "30Gi", "32Gi", "32Gi", "30Gi", "20Gi", "30Gi", "300Mi", "500Mi", "750Mi",
		"1Gi", "2Gi", "4Gi", "8Gi", "16Gi", "32Gi", "28Gi", "64Gi", "13Gi", "24Gi"}
	c := Case{Name: "wide-deployments"}
	out := map[string]int32{}
	in := map[string]int32{}
	for i := range cpu {
		w := Workload{Name: wideName(i), CPU: cpu[i], Memory: mem[i], ZoneSpread: true,
			SelfAntiAffinity: i < 3, HostnameSpread: i >= 3 && i < 6}
		c.Workloads = append(c.Workloads, w)
		out[w.Name], in[w.Name] = 35, 25
		if i >= 20 {
			out[w.Name], in[w.Name] = 30, 20
		}
	}
	c.Phases = []Phase{
		{Name: "scale-out", Kind: ScaleOut, Replicas: out,
			Thresholds: Thresholds{MaxTime: 5 * time.Minute, MinCPUUtil: 0.20, MinMemUtil: 0.20, MaxHeapMiB: 150, MaxCPUCores: 0.70}},
		{Name: "scale-in", Kind: ScaleIn, Replicas: in,
			Thresholds: Thresholds{MaxTime: 40 * time.Minute, MinCPUUtil: 0.20, MinMemUtil: 0.20, MaxHeapMiB: 210, MaxCPUCores: 0.30}},
	}
	return c
}

func wideName(i int) string { return fmt.Sprintf("wide-%d", i+1) }

// Scaled returns the case with every replica count divided by divisor and
// rounded up (so that no workload vanishes); 1 leaves it whole.
func (c Case) Scaled(divisor int) Case {
	out := c
	out.Phases = make([]Phase, len(c.Phases))
	for i, p := range c.Phases {
		p.Replicas = make(map[string]int32, len(c.Phases[i].Replicas))
		for name, n := range c.Phases[i].Replicas {
			p.Replicas[name] = int32(math.Ceil(float64(n) / float64(divisor)))
		}
		out.Phases[i] = p
	}
	return out
}
