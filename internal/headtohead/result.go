package headtohead

import (
	"fmt"
	"strings"
	"time"
)

// Result is one phase of a case measured on one system.
type Result struct {
	Case, Phase, System string
	Kind                Kind
	// Pods is how many pods the phase ends with.
	Pods int
	// TimeToRunning is from the phase's change to every pod Running (for a
	// drift: on nodes none of which was made from the old template).
	TimeToRunning time.Duration
	// Nodes, CostPerHour, CPUUtil and MemUtil are the fleet when every pod
	// runs (a scale-out) or once it has settled (otherwise); for a scale-in
	// or drift CostPerHour is the fleet's cost when the phase began and
	// CostAfter the settled fleet's.
	Nodes                int
	CostPerHour          float64
	CPUUtil, MemUtil     float64
	CostAfter            float64
	ControllerCPUSeconds float64
	// ControllerPeakRSSMiB is the controller's peak resident set during the phase.
	ControllerPeakRSSMiB float64
	// Settle is from the phase's change to the fleet's last change before it
	// stayed unchanged for the quiet window (scale-in and drift).
	Settle time.Duration
	// Duration is the whole phase, quiet window included.
	Duration time.Duration
	// ProtectedNodesKept counts the nodes that ran a do-not-disrupt pod when
	// a scale-in began and are still in the fleet (cases with such pods).
	ProtectedNodesKept int
}

// Name is the phase's name in BENCH lines: <case>/<phase>.
func (r Result) Name() string { return r.Case + "/" + r.Phase }

// settles reports whether the phase waits for the fleet to settle.
func (r Result) settles() bool { return r.Kind != ScaleOut }

// BenchLine is the phase's BENCH line.
func (r Result) BenchLine() string {
	var b strings.Builder
	fmt.Fprintf(&b, "BENCH headtohead=%s system=%s pods=%d time_to_running_seconds=%.1f nodes=%d cost_per_hour=%.3f cpu_util=%.3f mem_util=%.3f controller_cpu_seconds=%.2f controller_peak_rss_mib=%.1f",
		r.Name(), r.System, r.Pods, r.TimeToRunning.Seconds(), r.Nodes, r.CostPerHour, r.CPUUtil, r.MemUtil,
		r.ControllerCPUSeconds, r.ControllerPeakRSSMiB)
	if r.settles() {
		fmt.Fprintf(&b, " settle_seconds=%.1f cost_after=%.3f", r.Settle.Seconds(), r.CostAfter)
	}
	return b.String()
}

// Violations lists how the result misses the suite's thresholds for its
// phase: the time (to Running for a scale-out, to the settled fleet
// otherwise), the utilisation floors, and the mean CPU ceiling. The heap
// bound is not checked: the bed measures the resident set, which holds more
// than the live heap.
func (r Result) Violations(t Thresholds) []string {
	var out []string
	took := r.TimeToRunning
	if r.settles() {
		took = r.Settle
	}
	if t.MaxTime > 0 && took >= t.MaxTime {
		out = append(out, fmt.Sprintf("took %s, the suite allows less than %s", took.Round(time.Second), t.MaxTime))
	}
	if t.MinCPUUtil > 0 && r.CPUUtil <= t.MinCPUUtil {
		out = append(out, fmt.Sprintf("CPU utilisation %.3f, the suite wants more than %.2f", r.CPUUtil, t.MinCPUUtil))
	}
	if t.MinMemUtil > 0 && r.MemUtil <= t.MinMemUtil {
		out = append(out, fmt.Sprintf("memory utilisation %.3f, the suite wants more than %.2f", r.MemUtil, t.MinMemUtil))
	}
	if cores := r.ControllerCPUSeconds / r.Duration.Seconds(); t.MaxCPUCores > 0 && cores >= t.MaxCPUCores {
		out = append(out, fmt.Sprintf("the controller used %.2f cores on average, the suite allows less than %.2f", cores, t.MaxCPUCores))
	}
	return out
}
