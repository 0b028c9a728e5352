package termination_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stowage-dev/stowage/controller/nodeclaim/nodeclaimtest"
	"github.com/stowage-dev/stowage/controller/termination"
)

// TestAPDBThatAllowsADisruptionAgainWakesTheDrain: a drain a PDB refused
// evicts its pod as soon as the PDB's status allows a disruption, not when
// its eviction backoff runs out (an hour here, far past the test's wait).
func TestAPDBThatAllowsADisruptionAgainWakesTheDrain(t *testing.T) {
	e := startOpts(t, termination.Options{
		DrainPollInterval: 100 * time.Millisecond, InstancePollInterval: 100 * time.Millisecond,
		EvictionRetryBase: time.Hour, EvictionRetryMax: time.Hour,
	})
	pool := e.NodePool(nil)
	e.Create(pool)
	claim, node := registered(t, e, pool)
	ns := e.Namespace()
	web := e.Pod(ns, "web", node.Name)
	running(e, web)
	pdb := blockingPDB(e, ns, "web")
	refused := nodeclaimtest.CounterValue(t, termination.Evictions.WithLabelValues(termination.OutcomeRefused))

	e.Delete(claim)
	e.Eventually(settle, func() error {
		if nodeclaimtest.CounterValue(t, termination.Evictions.WithLabelValues(termination.OutcomeRefused)) == refused {
			return fmt.Errorf("no eviction refused yet")
		}
		return nil
	})
	notTerminating(t, e, web)

	e.UpdateStatus(pdb, func() { pdb.Status.DisruptionsAllowed, pdb.Status.CurrentHealthy = 1, 2 })
	e.Eventually(settle, func() error { return e.Gone(web) })
	finished(e, claim, node, claim.Status.ProviderID)
}
