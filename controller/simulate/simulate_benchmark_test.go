package simulate_test

import (
	"fmt"
	"runtime"
	"slices"
	"syscall"
	"testing"

	"github.com/stowage-dev/stowage/controller/simulate"
	"github.com/stowage-dev/stowage/controller/simulate/report"
)

// BenchmarkSimulateDay replays a 24-hour scenario peaking near 500 nodes and
// 10,000 pods and prints its BENCH line with the process CPU time of the run.
func BenchmarkSimulateDay(b *testing.B) {
	s := readScenario(b, "testdata/day-10k.yaml")
	for range b.N {
		before := cpuSeconds(b)
		r := run(b, s, false)
		cpu := cpuSeconds(b) - before
		st := system(b, r, simulate.SystemStowage)
		pods := slices.Max(st.Series.PendingTotal())
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Printf("BENCH simulate=day-10k hours=24 peak_nodes=%d pods_started=%d max_pending=%d cost=%.2f cpu_seconds=%.3f heap_sys_mib=%.0f\n",
			slices.Max(st.Series.NodesTotal()), started(st.Tiers), pods, st.TotalCost, cpu, float64(ms.HeapSys)/(1<<20))
	}
}

func started(tiers []report.Tier) int {
	n := 0
	for _, t := range tiers {
		n += t.PodsStarted
	}
	return n
}

func cpuSeconds(tb testing.TB) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}
