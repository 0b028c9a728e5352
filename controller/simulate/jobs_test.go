package simulate_test

import (
	"testing"

	"github.com/stowage-dev/stowage/controller/simulate"
)

// TestJobReplacesAPodLostWithItsNode: the Job controller creates pods until
// its completions are reached, so a pod lost with its interrupted node is
// replaced, however many pods the Job has created before.
func TestJobReplacesAPodLostWithItsNode(t *testing.T) {
	r, violations, err := simulate.RunChecked(t.Context(), readScenario(t, "testdata/job-interrupted.yaml"), simulate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range violations {
		t.Errorf("%s", v)
	}
	stowage := system(t, r, simulate.SystemStowage)
	if len(stowage.Interruptions) != 1 {
		t.Fatalf("interruptions %+v, want the scripted one", stowage.Interruptions)
	}
	if tier := stowage.Tiers[0]; tier.PodsStarted != 3 || tier.PodsNeverRan != 0 {
		t.Errorf("train: %d pods started, %d never ran; want 3 started (two, and the one replacing the pod lost at 10m) and none left",
			tier.PodsStarted, tier.PodsNeverRan)
	}
}

// TestAJobStartsItsNextPodAsOneCompletes: the Job controller acts on a
// completion at once, not at the simulator's next unrelated instant.
func TestAJobStartsItsNextPodAsOneCompletes(t *testing.T) {
	r, violations, err := simulate.RunChecked(t.Context(), readScenario(t, "testdata/job-waves.yaml"), simulate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range violations {
		t.Errorf("%s", v)
	}
	if tier := system(t, r, simulate.SystemStowage).Tiers[0]; tier.PodsStarted != 8 {
		t.Errorf("train: %d pods started, want 8", tier.PodsStarted)
	}
}
