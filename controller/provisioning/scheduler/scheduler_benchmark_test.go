package scheduler_test

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning/checker"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler/schedulertest"
	"github.com/stowage-dev/stowage/internal/peakheap"
)

// benchCase is one public workload on one catalogue (../shared/bench/WORKLOADS.md).
type benchCase struct {
	workload, catalogue string
	n                   int
	pods                func() []*corev1.Pod
	types               func() []*cloudprovider.InstanceType
	opts                scheduler.Options
	// preferences names the preference policy for W3, empty otherwise.
	preferences string
	// heap reports the peak heap of the solve (peakheap).
	heap bool
}

func (bc benchCase) name() string {
	name := fmt.Sprintf("%s/%s/%d", bc.workload, bc.catalogue, bc.n)
	if bc.preferences != "" {
		name += "/" + bc.preferences
	}
	return name
}

func w1(catalogue string, types func() []*cloudprovider.InstanceType, n int) benchCase {
	return benchCase{workload: "W1", catalogue: catalogue, n: n, pods: func() []*corev1.Pod { return schedulertest.W1(n) }, types: types, heap: n >= 50000}
}

func w3(policy scheduler.PreferencePolicy) benchCase {
	return benchCase{workload: "W3", catalogue: "C1", n: 4000, pods: schedulertest.W3, types: schedulertest.C1,
		opts: scheduler.Options{Preferences: policy}, preferences: string(policy)}
}

func benchCases() []benchCase {
	return []benchCase{
		w1("C1", schedulertest.C1, 1000), w1("C1", schedulertest.C1, 5000), w1("C1", schedulertest.C1, 50000),
		w1("C1", schedulertest.C1, 150000),
		w1("C2", schedulertest.C2, 1000), w1("C2", schedulertest.C2, 5000),
		w3(scheduler.PreferencesRespect), w3(scheduler.PreferencesIgnore), w3(scheduler.PreferencesCostAware),
	}
}

// BenchmarkSolve runs one fresh solve per iteration on each public workload,
// checks every result with the independent checker, and prints one BENCH line per case.
func BenchmarkSolve(b *testing.B) {
	for _, bc := range benchCases() {
		b.Run(bc.name(), func(b *testing.B) { runBenchCase(b, bc) })
	}
}

// measurement is what one case's solves produced.
type measurement struct {
	cpuSeconds float64
	solves     int
	result     *scheduler.Results
	heapMiB    float64
	violations []checker.Violation
}

func runBenchCase(b *testing.B, bc benchCase) {
	pods := bc.pods()
	lowerBound := schedulertest.LowerBound(pods, bc.types())
	var m measurement
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		s := schedulertest.Snapshot(pods, bc.types())
		var heap *peakheap.Sampler
		if bc.heap {
			heap = peakheap.Start(time.Millisecond)
		} else {
			runtime.GC()
		}
		b.StartTimer()
		before := cpuSeconds()
		r := scheduler.Solve(s, bc.opts)
		m.cpuSeconds += cpuSeconds() - before
		b.StopTimer()
		if heap != nil {
			m.heapMiB = max(m.heapMiB, heap.Stop())
		}
		m.solves++
		m.result = r
		if m.violations = checker.Check(s, r); len(m.violations) > 0 {
			break
		}
		b.StartTimer()
	}
	// Only a result the checker accepted has figures worth printing.
	failOnViolations(b, m.violations)
	fmt.Println(benchLine(bc, lowerBound, m))
}

// benchLine renders a case in the format WORKLOADS.md fixes.
func benchLine(bc benchCase, lowerBound float64, m measurement) string {
	cost := claimsCost(m.result)
	perSolve := m.cpuSeconds / float64(max(m.solves, 1))
	line := fmt.Sprintf("BENCH workload=%s catalogue=%s pods=%d nodes=%d cost=%.3f lower_bound=%.3f cost_ratio=%.3f cpu_seconds=%.3f pods_per_sec=%.0f unschedulable=%d",
		bc.workload, bc.catalogue, bc.n, len(m.result.NewNodeClaims), cost, lowerBound, cost/lowerBound, perSolve,
		float64(bc.n)/perSolve, len(m.result.Unschedulable))
	if bc.preferences != "" {
		line += " preferences=" + bc.preferences
	}
	if bc.heap {
		line += fmt.Sprintf(" peak_heap_mib=%.0f", m.heapMiB)
	}
	return line
}

// claimsCost sums, over new claims, the cheapest allowed offering of the first listed type.
func claimsCost(r *scheduler.Results) float64 {
	total := 0.0
	for _, nc := range r.NewNodeClaims {
		if len(nc.InstanceTypes) > 0 {
			total += nc.InstanceTypes[0].CheapestPrice(nc.Requirements)
		}
	}
	return total
}

// cpuSeconds is the process's user+system CPU time so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(fmt.Errorf("reading rusage: %w", err))
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// failOnViolations logs the first violations and fails.
func failOnViolations(tb testing.TB, vs []checker.Violation) {
	tb.Helper()
	if len(vs) == 0 {
		return
	}
	for i, v := range vs {
		if i == 25 {
			tb.Logf("... and %d more", len(vs)-i)
			break
		}
		tb.Log(v)
	}
	tb.Fatalf("checker found %d violations", len(vs))
}

// TestBenchmarkWorkloadsPassChecker solves the public 1,000-pod workloads so that
// `make test` runs the checker on them: every result must hold and place every pod.
func TestBenchmarkWorkloadsPassChecker(t *testing.T) {
	for _, bc := range []benchCase{w1("C1", schedulertest.C1, 1000), w1("C2", schedulertest.C2, 1000)} {
		t.Run(bc.name(), func(t *testing.T) {
			s := schedulertest.Snapshot(bc.pods(), bc.types())
			r := scheduler.Solve(s, bc.opts)
			for i, u := range r.Unschedulable {
				if i < 5 {
					t.Logf("unschedulable %s/%s: %s", u.Pod.Namespace, u.Pod.Name, u.Reason)
				}
			}
			if len(r.Unschedulable) != 0 {
				t.Errorf("%d pods unschedulable, want 0", len(r.Unschedulable))
			}
			failOnViolations(t, checker.Check(s, r))
		})
	}
}
