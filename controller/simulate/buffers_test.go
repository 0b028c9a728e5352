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

// gpuNodes counts the GPU nodes at sample i: one vLLM replica (or buffer
// chunk) fills a g5.12xlarge, and the scenario's fallbacks are as large.
func gpuNodes(s report.System, i int) int {
	n := 0
	for _, it := range []string{"g5.12xlarge", "g5.24xlarge", "g6.12xlarge"} {
		if series := s.Series.NodesByInstanceType[it]; i < len(series) {
			n += series[i]
		}
	}
	return n
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

// TestPercentageBufferFollowsItsWorkload: a CapacityBuffer of 50 % of the
// vllm Deployment keeps room for one replica while it runs two, four while
// the spike runs eight, and one again once it is back at two: the buffer is
// booked again whenever the Deployment's replica curve changes its count,
// not once at the start.
func TestPercentageBufferFollowsItsWorkload(t *testing.T) {
	s := readScenario(t, "../../examples/scenarios/2am-spike-floor.yaml")
	half := int32(50)
	s.CapacityBuffers[0].Spec.Replicas, s.CapacityBuffers[0].Spec.Percentage = nil, &half
	stowage := system(t, run(t, s, false), simulate.SystemStowage)
	last := len(stowage.Series.CostPerHour) - 1
	for _, c := range []struct {
		sample, replicas, chunks int
	}{{30, 2, 1}, {210, 8, 4}, {last, 2, 1}} { // 00:30, 03:30 in the spike, the end
		if n := gpuNodes(stowage, c.sample); n != c.replicas+c.chunks {
			t.Errorf("sample %d: %d GPU nodes, want %d for the replicas and %d for the buffer's chunks", c.sample, n, c.replicas, c.chunks)
		}
	}
}
