package simulate_test

import (
	"flag"
	"fmt"
	"testing"

	"github.com/stowage-dev/stowage/controller/simulate"
)

var spotJobsAll = flag.Bool("spotjobs.all", false, "replay testdata/spot-jobs.yaml with every seed from 1 to 20 (make soak), not only 11 to 13")

// TestSpotJobsLoseNoPod replays the user's spot batch scenario (3 spot
// interruptions per instance-hour, many of them while the instance still
// boots) checked: no pod may be on an instance when it terminates after its
// notice (pods_lost 0, and the pod-lost invariant), whatever the seed.
func TestSpotJobsLoseNoPod(t *testing.T) {
	seeds := []int64{11, 12, 13}
	if *spotJobsAll {
		seeds = nil
		for seed := range int64(20) {
			seeds = append(seeds, seed+1)
		}
	}
	s := readScenario(t, "testdata/spot-jobs.yaml")
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			t.Parallel()
			rep, violations, err := simulate.RunChecked(t.Context(), s, simulate.Options{Seed: &seed})
			if err != nil {
				t.Fatal(err)
			}
			stowage := system(t, rep, simulate.SystemStowage)
			if lost := stowage.PodsLost(); lost != 0 || len(stowage.Interruptions) < 100 {
				t.Errorf("%d pods lost in %d interruptions, want none lost in the hundreds of interruptions of 3 an hour", lost, len(stowage.Interruptions))
			}
			for _, v := range violations {
				if v.Invariant == simulate.InvariantPodLost {
					t.Errorf("%s", v)
				}
			}
		})
	}
}
