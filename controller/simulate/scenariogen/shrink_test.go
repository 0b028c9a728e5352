package scenariogen_test

import (
	batchv1 "k8s.io/api/batch/v1"

	"bytes"
	"slices"
	"testing"

	"github.com/stowage-dev/stowage/controller/simulate"
	"github.com/stowage-dev/stowage/controller/simulate/scenariogen"
)

// hasGPUJob is a stand-in failure: the scenario holds a Job asking for GPUs.
func hasGPUJob(s *simulate.Scenario) bool {
	return slices.ContainsFunc(s.Jobs, func(j *batchJob) bool {
		_, ok := j.Spec.Template.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"]
		return ok
	})
}

func TestShrinkKeepsTheFailureAndCutsTheRest(t *testing.T) {
	var s *simulate.Scenario
	for seed := int64(1); s == nil; seed++ {
		if g := scenariogen.Generate(seed, scenariogen.Options{}); hasGPUJob(g) && len(g.Spec.Workloads) > 2 && len(g.NodePools) > 1 {
			s = g
		}
	}
	before, err := scenariogen.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	small, replays := scenariogen.Shrink(s, hasGPUJob)
	if !hasGPUJob(small) {
		t.Fatal("the shrunk scenario no longer fails")
	}
	if len(small.Spec.Workloads) != 1 || len(small.Deployments) != 0 || len(small.NodePools) != 0 || len(small.NodeClasses) != 0 ||
		len(small.DaemonSets) != 0 || len(small.Spec.Capacity) != 0 || len(small.Spec.Interruptions.Scripted) != 0 {
		t.Errorf("shrunk to %d workloads, %d deployments, %d pools, %d classes, %d daemonsets, %d windows, %d interruptions; want the one Job alone",
			len(small.Spec.Workloads), len(small.Deployments), len(small.NodePools), len(small.NodeClasses), len(small.DaemonSets),
			len(small.Spec.Capacity), len(small.Spec.Interruptions.Scripted))
	}
	if spec := small.Jobs[0].Spec.Template.Spec; spec.Affinity != nil || len(spec.TopologySpreadConstraints) > 0 || len(spec.Tolerations) > 0 {
		t.Errorf("the Job keeps constraints the failure does not need: %+v", spec)
	}
	after, err := scenariogen.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("Shrink changed the scenario it was given")
	}
	file, err := scenariogen.Marshal(small)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := simulate.ReadScenario(bytes.NewReader(file)); err != nil {
		t.Errorf("the shrunk scenario does not read: %v", err)
	}
	t.Logf("%d replays", replays)
}

type batchJob = batchv1.Job
