package simulate_test

import (
	"testing"

	"github.com/stowage-dev/stowage/controller/simulate"
	"github.com/stowage-dev/stowage/controller/simulate/report"
)

// prioritiesScenario is testdata/priorities.yaml with its replica counts
// and solve bound divided by div.
func prioritiesScenario(t testing.TB, div int32) *simulate.Scenario {
	t.Helper()
	s := readScenario(t, "testdata/priorities.yaml")
	s.Spec.SolveBoundPods /= int(div)
	for i := range s.Spec.Workloads {
		for j := range s.Spec.Workloads[i].Replicas {
			s.Spec.Workloads[i].Replicas[j].Count /= div
		}
	}
	return s
}

// priorities returns a report's per-priority records, highest priority
// first, failing unless there are three.
func priorities(t testing.TB, r *report.Report) []report.Tier {
	t.Helper()
	st := system(t, r, simulate.SystemStowage)
	if len(st.Priorities) != 3 {
		t.Fatalf("%d priorities in the report, want 3", len(st.Priorities))
	}
	return st.Priorities
}

// TestTheHighestPriorityRunsFirstWhenTheSolveIsBounded is issue 27's "done
// means" at a fifth of its size (4,000 pods of three priorities pending at
// once, each solve bounded to 800), breaking no invariant: every pod runs,
// each priority's median pod runs before the median pod of the priority
// below, and its slowest pods (p99) no later than that median. kube-scheduler
// retries pending pods when their backoff runs out (schedqueue.go), so the
// last pods of one priority bind in the same retry as the first of the next.
// Neither an unbounded solve (one batch, all at once) nor one in the order
// before priorities (largest, then by name: critical, filler, standard)
// gives that.
func TestTheHighestPriorityRunsFirstWhenTheSolveIsBounded(t *testing.T) {
	r, violations, err := simulate.RunChecked(t.Context(), prioritiesScenario(t, 5), simulate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range violations {
		t.Errorf("%s", v)
	}
	ps := priorities(t, r)
	for i, p := range ps {
		if p.PodsNeverRan != 0 {
			t.Errorf("priority %s: %d pods never ran", p.Name, p.PodsNeverRan)
		}
		if i > 0 && (ps[i-1].TimeToRunning.P50 >= p.TimeToRunning.P50 || ps[i-1].TimeToRunning.P99 > p.TimeToRunning.P50) {
			t.Errorf("priority %s's p50 %s and p99 %s, priority %s's p50 %s: want the p50 before and the p99 no later",
				ps[i-1].Name, ps[i-1].TimeToRunning.P50, ps[i-1].TimeToRunning.P99, p.Name, p.TimeToRunning.P50)
		}
		t.Logf("priority %s: %d pods, time to Running p50 %s, p95 %s", p.Name, p.PodsStarted, p.TimeToRunning.P50, p.TimeToRunning.P95)
	}
}
