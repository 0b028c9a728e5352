package simulate_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stowage-dev/stowage/controller/provisioning"
	"github.com/stowage-dev/stowage/controller/simulate"
)

// slowestBoot is the zone-spread scenario's longest boot.
const slowestBoot = 120 * time.Second

// TestZoneSpreadRunsEveryPodWithoutDeletingANominatedNode is issue 9's
// regression: 30 pods spread over zones (DoNotSchedule) and hosts
// (ScheduleAnyway) with a DaemonSet, on nodes that become Ready at staggered
// times. Every pod runs within a batch window, the slowest boot and a
// minute, and no node is deleted: each was chosen for a pod, so none may be
// removed as empty while its pod waits for kube-scheduler.
func TestZoneSpreadRunsEveryPodWithoutDeletingANominatedNode(t *testing.T) {
	for _, seed := range []int64{9, 1, 2} {
		s := readScenario(t, "testdata/zone-spread.yaml")
		s.Spec.Seed = seed
		stowage := system(t, run(t, s, false), simulate.SystemStowage)
		web := stowage.Tiers[0]
		if web.PodsStarted != 30 || web.PodsNeverRan != 0 {
			t.Errorf("seed %d: %d pods ran and %d never did, want 30 and 0", seed, web.PodsStarted, web.PodsNeverRan)
		}
		if limit := provisioning.DefaultBatchMaxDuration + slowestBoot + time.Minute; web.TimeToRunning.P99 > limit {
			t.Errorf("seed %d: the slowest pod ran after %s, want within %s", seed, web.TimeToRunning.P99, limit)
		}
		if stowage.NodesTerminated != 0 || len(stowage.Consolidations) != 0 {
			t.Errorf("seed %d: %d nodes terminated, %d consolidated; want none while every node has its pod",
				seed, stowage.NodesTerminated, len(stowage.Consolidations))
		}
		t.Logf("seed %d: time to Running p50 %s, p99 %s; %d nodes", seed, web.TimeToRunning.P50, web.TimeToRunning.P99, stowage.NodesLaunched)
	}
}

// TestShortPoolFallsBackToTheNextPool: the p5 pool (weight 100) is short in
// every zone; its claims are deleted after one launch attempt, the next
// batch launches on the p4d pool, and the report lists each move.
func TestShortPoolFallsBackToTheNextPool(t *testing.T) {
	r := run(t, readScenario(t, "testdata/gpu-pools.yaml"), false)
	stowage := system(t, r, simulate.SystemStowage)
	jobStart := r.Start.Add(time.Minute)
	if len(stowage.Fallbacks) != 4 {
		t.Fatalf("%d fallbacks, want one per training pod's claim (4): %+v", len(stowage.Fallbacks), stowage.Fallbacks)
	}
	for _, f := range stowage.Fallbacks {
		if f.FromPool != "p5" || f.ToPool != "p4d" || f.Short.InstanceType != "p5.48xlarge" || f.Chosen.InstanceType != "p4d.24xlarge" {
			t.Errorf("fallback %s (%s) -> %s (%s), want p5.48xlarge (p5) -> p4d.24xlarge (p4d)", f.Short, f.FromPool, f.Chosen, f.ToPool)
		}
		// The first window, one failed launch, and the window the deleted
		// claim opens.
		if d := f.At.Sub(jobStart); d > 2*provisioning.DefaultBatchMaxDuration {
			t.Errorf("fell back %s after the job started, want within two batch windows", d)
		}
	}
	if got := stowage.Series.NodesByInstanceType["p5.48xlarge"]; slices.Max(append(got, 0)) != 0 {
		t.Errorf("a p5.48xlarge node ran, which has no capacity: %v", got)
	}
	if got := slices.Max(append(stowage.Series.NodesByInstanceType["p4d.24xlarge"], 0)); got != 4 {
		t.Errorf("%d p4d.24xlarge nodes at most, want 4", got)
	}
	train := stowage.Tiers[0]
	if train.PodsStarted != 4 || train.TimeToRunning.P99 > 2*provisioning.DefaultBatchMaxDuration+slowestBoot+time.Minute {
		t.Errorf("training pods: %+v, want all 4 running within two windows, a boot and a minute", train)
	}
	t.Logf("fallback %s after the job started; time to Running p50 %s, p99 %s",
		stowage.Fallbacks[0].At.Sub(jobStart), train.TimeToRunning.P50, train.TimeToRunning.P99)
}
