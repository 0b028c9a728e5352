package simulate_test

import (
	"flag"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stowage-dev/stowage/controller/simulate"
	"github.com/stowage-dev/stowage/controller/simulate/report"
	"github.com/stowage-dev/stowage/internal/peakheap"
)

// dayHours cuts each day short, for a machine that cannot afford a whole one:
// the first dayHours hours of the day are replayed, and the BENCH line says so.
var dayHours = flag.Float64("simulate.hours", 24, "replay only the first `hours` of each BenchmarkSimulateDay case")

// BenchmarkSimulateDay replays a 24-hour scenario per case and prints its
// BENCH line with the process CPU time of the run and the most heap the run
// occupied: day-10k peaks near 500 nodes and 10,000 pods (make bench),
// day-150k near 10,000 nodes and 150,000 pods (make soak).
func BenchmarkSimulateDay(b *testing.B) {
	for _, name := range []string{"day-10k", "day-150k"} {
		b.Run(name, func(b *testing.B) {
			s := readScenario(b, "testdata/"+name+".yaml")
			if h := time.Duration(*dayHours * float64(time.Hour)); h < s.Spec.Duration.Duration {
				s.Spec.Duration.Duration = h
			}
			hours := s.Spec.Duration.Hours()
			for range b.N {
				heap := peakheap.Start(10 * time.Millisecond)
				before := cpuSeconds(b)
				r := run(b, s, false)
				cpu := cpuSeconds(b) - before
				peak := heap.Stop()
				st := system(b, r, simulate.SystemStowage)
				fmt.Printf("BENCH simulate=%s hours=%g peak_nodes=%d pods_started=%d max_pending=%d cost=%.2f cpu_seconds=%.3f peak_heap_mib=%.0f\n",
					name, hours, slices.Max(st.Series.NodesTotal()), started(st.Tiers), slices.Max(st.Series.PendingTotal()), st.TotalCost, cpu, peak)
			}
		})
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
