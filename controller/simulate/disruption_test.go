package simulate_test

import (
	"testing"
	"time"

	"github.com/stowage-dev/stowage/controller/simulate"
)

// The 2 AM spike: once the web tier scales back in, the ReplicaSet leaves
// partly filled nodes, and consolidation removes some of them (the GPU pool,
// WhenEmpty, only ever loses empty nodes). Every command says its method and
// reason, and saves money.
func TestTheSpikesPartlyFilledWebNodesAreConsolidated(t *testing.T) {
	r := run(t, readScenario(t, "../../examples/scenarios/2am-spike.yaml"), false)
	st := system(t, r, simulate.SystemStowage)
	consolidated := 0
	for _, c := range st.Consolidations {
		after := c.At.Sub(r.Start) >= 4*time.Hour
		switch c.Method {
		case "single-node", "multi-node":
			if c.Reason != "Underutilized" || c.SavingsPerHour <= 0 {
				t.Errorf("%s at %s: reason %q, savings %.4f; want Underutilized and a saving", c.Method, c.At, c.Reason, c.SavingsPerHour)
			}
			for _, in := range c.Removed {
				if in.InstanceType[:2] == "g5" {
					t.Errorf("%s removed GPU node %s from a WhenEmpty pool", c.Method, in.Name)
				}
			}
			if after {
				consolidated += len(c.Removed)
			}
		case "emptiness":
			if c.Reason != "Empty" {
				t.Errorf("emptiness at %s with reason %q", c.At, c.Reason)
			}
		}
	}
	if consolidated == 0 {
		t.Errorf("no partly filled node consolidated after the spike: %+v", st.Consolidations)
	}
	if st.PodsLost() != 0 {
		t.Errorf("%d pods lost", st.PodsLost())
	}
}

// Expiry replaces every node at its expireAfter, launching the replacement
// before the pods are evicted: no pod waits long, and expiry is booked as a
// renewal, not as savings.
func TestExpiryReplacesNodesBeforeEvictingTheirPods(t *testing.T) {
	r := run(t, readScenario(t, "testdata/expiry.yaml"), false)
	st := system(t, r, simulate.SystemStowage)
	expired := 0
	for _, c := range st.Consolidations {
		if c.Method != "expiration" {
			continue
		}
		expired++
		if c.Reason != "Expired" || c.SavingsPerHour != 0 || len(c.Removed) != 1 {
			t.Errorf("expiry at %s: reason %q, savings %.4f, removed %d; want Expired, none, one node", c.At, c.Reason, c.SavingsPerHour, len(c.Removed))
		}
	}
	if expired < 2 {
		t.Fatalf("%d nodes expired in an hour with expireAfter 20m, want every node at least once", expired)
	}
	if web := st.Tiers[0]; web.PodsNeverRan != 0 {
		t.Errorf("web: %+v", web)
	}
	// Once the first nodes are up, a pod evicted from an expired node is bound
	// to its Ready replacement at once: no sample finds a pod pending, where
	// waiting for a boot after the eviction would show one for a minute or two.
	for i, n := range st.Series.PendingByTier["web"] {
		if at := time.Duration(i) * r.Step; at >= 5*time.Minute && n > 0 {
			t.Errorf("%d web pods pending at %s", n, at)
		}
	}
}
