package simulate

import (
	"os"
	"slices"
	"testing"
)

func TestTwoAMSpikeRuns(t *testing.T) {
	f, err := os.Open("../../examples/scenarios/2am-spike.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := ReadScenario(f)
	if err != nil {
		t.Fatal(err)
	}
	results, err := Run(t.Context(), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := results[0]
	t.Logf("launched=%d terminated=%d lost=%d cost=%.2f fallbacks=%+v interruptions=%+v", r.launched, r.terminated, r.lost, r.cost, r.fallbacks, r.interruptions)
	for _, tier := range r.tiers() {
		d := slices.Clone(r.toRunning[tier])
		slices.Sort(d)
		t.Logf("%s: n=%d p50=%s p95=%s max=%s", tier, len(d), d[len(d)/2], d[len(d)*95/100], d[len(d)-1])
	}
	for _, a := range r.actions {
		t.Logf("%s %s", a.at, a.what)
	}
}
