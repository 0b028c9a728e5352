package simulate_test

import (
	"testing"

	"github.com/stowage-dev/stowage/controller/simulate"
	"github.com/stowage-dev/stowage/controller/simulate/report"
)

// TestFloorAndBufferWarmTheGPUTier replays the 2 AM spike with and without
// the GPU pool's floor and a CapacityBuffer of one vLLM replica: with them a
// warm GPU node stands beside the replicas before the spike and after it,
// vLLM's replicas reach Running sooner at the 95th percentile, and the warm
// node costs more.
func TestFloorAndBufferWarmTheGPUTier(t *testing.T) {
	base := system(t, run(t, readScenario(t, "../../examples/scenarios/2am-spike.yaml"), false), simulate.SystemStowage)
	floor := system(t, run(t, readScenario(t, "../../examples/scenarios/2am-spike-floor.yaml"), false), simulate.SystemStowage)
	gpuNodes := func(s report.System, i int) int {
		n := 0
		for _, it := range []string{"g5.12xlarge", "g5.24xlarge", "g6.12xlarge"} {
			if series := s.Series.NodesByInstanceType[it]; i < len(series) {
				n += series[i]
			}
		}
		return n
	}
	last := len(floor.Series.CostPerHour) - 1
	for _, i := range []int{30, last} { // 00:30, before the spike; the end, after the scale-in
		if b, f := gpuNodes(base, i), gpuNodes(floor, i); f != b+1 {
			t.Errorf("sample %d: %d GPU nodes with the buffer, %d without; want one more for the buffer's replica", i, f, b)
		}
	}
	bp, fp := tier(t, base, "inference").TimeToRunning.P95, tier(t, floor, "inference").TimeToRunning.P95
	if fp >= bp {
		t.Errorf("vLLM p95 time to Running %s with the floor and the buffer, %s without: want it shorter", fp, bp)
	}
	if floor.TotalCost <= base.TotalCost {
		t.Errorf("total cost $%.2f with the buffer, $%.2f without: the warm node is not free", floor.TotalCost, base.TotalCost)
	}
	t.Logf("vLLM p95 %s -> %s; total cost $%.2f -> $%.2f", bp, fp, base.TotalCost, floor.TotalCost)
}

func tier(t *testing.T, s report.System, name string) report.Tier {
	t.Helper()
	for _, tr := range s.Tiers {
		if tr.Name == name {
			return tr
		}
	}
	t.Fatalf("no tier %s", name)
	return report.Tier{}
}
