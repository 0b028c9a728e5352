package simulate_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stowage-dev/stowage/controller/simulate"
	"github.com/stowage-dev/stowage/internal/peakheap"
)

// BenchmarkSimulateZoneOutage replays a three-zone cluster losing one zone for
// an hour, at 300 and 3,000 nodes (3,000 and 30,000 pods: make bench; the
// larger took 347 CPU-s and 2.9 GiB) and at 9,000 nodes (90,000 pods: make
// soak), and prints its BENCH line: the pods lost to the zone, the time from the
// outage until every pod ran again, the 99th percentile of the CPU time of a
// provisioning batch, the nodes launched, and the process CPU time and most
// heap of the run.
func BenchmarkSimulateZoneOutage(b *testing.B) {
	for _, name := range []string{"zone-outage-300", "zone-outage-3k", "zone-outage-9k"} {
		b.Run(name, func(b *testing.B) { benchZoneOutage(b, readScenario(b, "testdata/"+name+".yaml")) })
	}
}

func benchZoneOutage(b *testing.B, s *simulate.Scenario) {
	for range b.N {
		var batches []float64
		opts := simulate.Options{Batch: func() func() {
			start := cpuSeconds(b)
			return func() { batches = append(batches, cpuSeconds(b)-start) }
		}}
		heap := peakheap.Start(10 * time.Millisecond)
		before := cpuSeconds(b)
		rep, err := simulate.Run(b.Context(), s, opts)
		if err != nil {
			b.Fatal(err)
		}
		cpu := cpuSeconds(b) - before
		peak := heap.Stop()
		st := system(b, rep, simulate.SystemStowage)
		if len(st.ZoneOutages) != 1 {
			b.Fatalf("zone outages %+v, want the scenario's one", st.ZoneOutages)
		}
		z := st.ZoneOutages[0]
		toRunning := "never"
		if d, ok := z.ToAllRunning(); ok {
			toRunning = fmt.Sprintf("%.0f", d.Seconds())
		}
		fmt.Printf("BENCH simulate=zone-outage nodes=%d pods=%d lost_zone_pods=%d seconds_to_all_running=%s solve_cpu_seconds_p99=%.3f nodes_launched=%d cpu_seconds=%.3f peak_heap_mib=%.0f\n",
			slices.Max(st.Series.NodesTotal()), maxRunning(st.Series.PodsByCapacityType), z.PodsLost, toRunning, p99(batches),
			st.NodesLaunched, cpu, peak)
	}
}

// maxRunning is the most pods running at once.
func maxRunning(byCapacity map[string][]int) int {
	most := 0
	for i := range slices.Max(lengths(byCapacity)) {
		n := 0
		for _, col := range byCapacity {
			if i < len(col) {
				n += col[i]
			}
		}
		most = max(most, n)
	}
	return most
}

func lengths(m map[string][]int) []int {
	out := []int{0}
	for _, col := range m {
		out = append(out, len(col))
	}
	return out
}

// p99 is the nearest-rank 99th percentile; 0 for none.
func p99(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sorted := slices.Sorted(slices.Values(xs))
	return sorted[(len(sorted)*99+99)/100-1]
}
