package simulate_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/simulate"
	"github.com/stowage-dev/stowage/controller/simulate/report"
)

// TestCapacityBlockUsedInsideItsWindow replays 2am-spike-block.yaml (a
// Capacity Block of two g5.12xlarge from 01:00 to 06:00 under the floor and
// the buffer): the block is paid for from its start whether used or not,
// vLLM replicas run on it during the spike, and no node runs in it before
// its start. Ended at 04:00 instead, while the spike's replicas still run on
// it, its nodes leave it by the pool's lead time (an hour before the end,
// the capacity block controller's mark), well before EC2's warning 40
// minutes before the end, and EC2 takes no instance of it back.
func TestCapacityBlockUsedInsideItsWindow(t *testing.T) {
	s := readScenario(t, "../../examples/scenarios/2am-spike-block.yaml")
	block := s.Spec.CapacityReservations[0]
	stowage := system(t, run(t, s, false), simulate.SystemStowage)
	start := minute(block.Start.Duration)
	expectReservedOnlyWithin(t, stowage, start, minute(block.End.Duration-30*time.Minute))
	if cost := column(stowage.Series.CostPerHourByCapacityType, v1alpha1.CapacityTypeReserved); cost[start-1] != 0 || cost[start] <= 0 || cost[start+30] != cost[start] {
		t.Errorf("reserved cost per hour %v before, at and 30 minutes after the block's start: want 0, then the block's price from its start, used or not",
			[]float64{cost[start-1], cost[start], cost[start+30]})
	}
	if slices.Max(column(stowage.Series.PodsByCapacityType, v1alpha1.CapacityTypeReserved)) == 0 {
		t.Errorf("no vLLM pod ran on the block")
	}

	s = readScenario(t, "../../examples/scenarios/2am-spike-block.yaml")
	s.Spec.CapacityReservations[0].End.Duration = 4 * time.Hour
	stowage = system(t, run(t, s, false), simulate.SystemStowage)
	leaving := minute(4*time.Hour - v1alpha1.DefaultCapacityBlockLeadTime)
	if column(stowage.Series.PodsByCapacityType, v1alpha1.CapacityTypeReserved)[leaving-1] == 0 {
		t.Fatalf("no vLLM pod on the block just before its nodes leave it: the test does not see them leave")
	}
	expectReservedOnlyWithin(t, stowage, start, leaving+15)
	for _, ix := range stowage.Interruptions {
		if ix.Instance.Offering.CapacityType == v1alpha1.CapacityTypeReserved {
			t.Errorf("EC2 took back %s at %s, with %d pods on it: the node did not leave the block in time", ix.Instance.Name, ix.Notice, ix.PodsLost)
		}
	}
}

// expectReservedOnlyWithin checks that reserved nodes ran at no sample
// outside [from, until) minutes, and at some inside it.
func expectReservedOnlyWithin(t *testing.T, s report.System, from, until int) {
	t.Helper()
	var outside []string
	inside := false
	for i, n := range column(s.Series.NodesByCapacityType, v1alpha1.CapacityTypeReserved) {
		switch {
		case n > 0 && (i < from || i >= until):
			outside = append(outside, (time.Duration(i) * time.Minute).String())
		case n > 0:
			inside = true
		}
	}
	if len(outside) > 0 || !inside {
		t.Errorf("reserved nodes at %s, outside the block's window [%s, %s); at some sample inside it: %v", strings.Join(outside, " "),
			time.Duration(from)*time.Minute, time.Duration(until)*time.Minute, inside)
	}
}

// column is one capacity type's series, zeros when it never ran.
func column[V int | float64](m map[string][]V, key string) []V {
	if c, ok := m[key]; ok {
		return c
	}
	return make([]V, 1000)
}

// minute is the sample at d, the scenario sampling every minute.
func minute(d time.Duration) int { return int(d / time.Minute) }
