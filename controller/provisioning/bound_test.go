package provisioning_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stowage-dev/stowage/controller/provisioning"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// TestABoundedSolveNominatesTheHighestPriorityAndTellsTheRestToWait: with
// a solve bounded to one pod, the pod whose PriorityClass (resolved by the
// API server's Priority admission) is highest is nominated; the other gets a
// WaitingForNextBatch event, and the batch says it was cut, which opens the
// next window.
func TestABoundedSolveNominatesTheHighestPriorityAndTellsTheRestToWait(t *testing.T) {
	f := setup(t)
	if err := f.env.Client.Create(t.Context(), &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "checkout"}, Value: 100000}); err != nil {
		t.Fatal(err)
	}
	low := f.pending(t, f.env.Cluster, "a-batch", "1")
	high := f.pendingWith(t, f.env.Cluster, "b-checkout", "1", func(spec *corev1.PodSpec) { spec.PriorityClassName = "checkout" })
	cut := testutil.ToFloat64(provisioning.SolvesCut)
	p := provisioning.NewProvisioner(f.env.Cluster, f.cloud, provisioning.ClientWriter{Client: f.env.Client}, f.recorder, f.ids,
		provisioning.WithSolveBound(func() scheduler.Bound { return scheduler.PodBudget(1) }))
	b, err := p.Provision(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !b.Cut() || testutil.ToFloat64(provisioning.SolvesCut) != cut+1 {
		t.Errorf("batch cut %v, solves_cut_total %v; want a cut counted", b.Cut(), testutil.ToFloat64(provisioning.SolvesCut)-cut)
	}
	if got := f.recorder.about(high); len(got) != 1 || !strings.HasPrefix(got[0], "Nominated: ") {
		t.Errorf("events on %s: %q, want a nomination", high.Name, got)
	}
	if got := f.recorder.about(low); len(got) != 1 || !strings.HasPrefix(got[0], "WaitingForNextBatch: Waiting for the next provisioning batch: the batch's solve reached its time bound after 1 pods") {
		t.Errorf("events on %s: %q, want WaitingForNextBatch", low.Name, got)
	}
}

// TestTimeBoundIsADeadlineOnTheClock: a TimeBound is reached once its clock
// has moved on by the bound from when the solve started.
func TestTimeBoundIsADeadlineOnTheClock(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	bound := provisioning.TimeBound(clk, 5*time.Second)()
	var reached []bool
	for _, step := range []time.Duration{0, 4 * time.Second, time.Second} {
		clk.SetTime(clk.Now().Add(step))
		reached = append(reached, bound.Reached(0))
	}
	if !slices.Equal(reached, []bool{false, false, true}) {
		t.Errorf("reached at +0s, +4s, +5s: %v, want false, false, true", reached)
	}
}
