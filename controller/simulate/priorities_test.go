package simulate_test

import (
	"testing"

	"github.com/stowage-dev/stowage/controller/simulate"
	"github.com/stowage-dev/stowage/controller/simulate/report"
)

// priorities runs testdata/priorities.yaml, its replica counts and solve
// bound divided by div, and returns the report's per-priority records,
// highest priority first.
func priorities(t testing.TB, div int32) []report.Tier {
	t.Helper()
	s := readScenario(t, "testdata/priorities.yaml")
	s.Spec.SolveBoundPods /= int(div)
	for i := range s.Spec.Workloads {
		for j := range s.Spec.Workloads[i].Replicas {
			s.Spec.Workloads[i].Replicas[j].Count /= div
		}
	}
	st := system(t, run(t, s, false), simulate.SystemStowage)
	if len(st.Priorities) != 3 {
		t.Fatalf("%d priorities in the report, want 3", len(st.Priorities))
	}
	return st.Priorities
}

// TestTheHighestPriorityRunsFirstWhenTheSolveIsBounded is issue 27's "done
// means" at a fifth of its size (4,000 pods of three priorities pending at
// once, each solve bounded to 800): every pod runs, and each priority's
// slowest pods (p99) run before the median pod of the priority below.
// Neither an unbounded solve (one batch, all at once) nor one in the order
// before priorities (largest, then by name: critical, filler, standard)
// gives that.
func TestTheHighestPriorityRunsFirstWhenTheSolveIsBounded(t *testing.T) {
	ps := priorities(t, 5)
	for i, p := range ps {
		if p.PodsNeverRan != 0 {
			t.Errorf("priority %s: %d pods never ran", p.Name, p.PodsNeverRan)
		}
		if i > 0 && ps[i-1].TimeToRunning.P99 >= p.TimeToRunning.P50 {
			t.Errorf("priority %s's p99 %s is not before priority %s's p50 %s",
				ps[i-1].Name, ps[i-1].TimeToRunning.P99, p.Name, p.TimeToRunning.P50)
		}
		t.Logf("priority %s: %d pods, time to Running p50 %s, p95 %s", p.Name, p.PodsStarted, p.TimeToRunning.P50, p.TimeToRunning.P95)
	}
}
