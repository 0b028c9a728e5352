package disruption_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/disruption"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/state"
)

// writer records the claims it deletes, or fails with err.
type writer struct {
	mu      sync.Mutex
	deleted []string
	err     error
}

func (w *writer) DeleteNodeClaim(_ context.Context, claim *v1alpha1.NodeClaim) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.deleted = append(w.deleted, claim.Name)
	return nil
}

func (w *writer) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.deleted
	w.deleted = nil
	return out
}

// world is a controller on an in-memory cluster state.
type world struct {
	clk      *clocktesting.FakeClock
	cluster  *state.Cluster
	writer   *writer
	recorder *recorder
	ctrl     *disruption.Controller
}

func newWorld(pools ...*v1alpha1.NodePool) *world {
	w := &world{clk: clocktesting.NewFakeClock(epoch), writer: &writer{}, recorder: &recorder{}}
	w.cluster = state.NewCluster(w.clk)
	for _, p := range pools {
		w.cluster.UpdateNodePool(p)
	}
	w.ctrl = disruption.New(w.clk, w.cluster, w.writer, disruption.Options{Recorder: w.recorder})
	return w
}

func (w *world) add(sns ...*scheduler.StateNode) {
	for _, sn := range sns {
		w.cluster.UpdateNodeClaim(sn.NodeClaim)
		w.cluster.UpdateNode(sn.Node)
		for _, p := range sn.Pods {
			w.cluster.UpdatePod(p)
		}
	}
}

func (w *world) marked() []string {
	var out []string
	for _, sn := range w.cluster.Snapshot(nil, nil).Nodes {
		if sn.MarkedForDeletion {
			out = append(out, sn.Name())
		}
	}
	return out
}

func TestControllerDeletesEmptyNodes(t *testing.T) {
	w := newWorld(pool("ctl-delete", "30s"))
	w.add(node("empty", "ctl-delete", 0, daemonPod("ds")), node("busy", "ctl-delete", 0, pod("web")))
	base := testutil.ToFloat64(disruption.Disrupted.WithLabelValues("ctl-delete", v1alpha1.DisruptionReasonEmpty))

	fatalIf(t, w.ctrl.RunOnce(t.Context()))
	if got := w.writer.take(); len(got) != 0 {
		t.Fatalf("deleted %q before consolidateAfter", got)
	}
	w.clk.Step(30 * time.Second)
	fatalIf(t, w.ctrl.RunOnce(t.Context()))
	if got, want := w.writer.take(), []string{"empty"}; !slices.Equal(got, want) {
		t.Fatalf("deleted %q, want %q", got, want)
	}
	if got, want := w.marked(), []string{"empty"}; !slices.Equal(got, want) {
		t.Errorf("marked for deletion %q, want %q", got, want)
	}
	if got, want := w.recorder.take(), []string{"NodeClaim/empty Disrupting", "Node/empty Disrupting"}; !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
	if got := testutil.ToFloat64(disruption.Disrupted.WithLabelValues("ctl-delete", v1alpha1.DisruptionReasonEmpty)) - base; got != 1 {
		t.Errorf("disrupted counter rose by %v, want 1", got)
	}
	// 10% of 2 nodes, rounded up, is 1; the node being deleted has taken it.
	if got := testutil.ToFloat64(disruption.AllowedDisruptions.WithLabelValues("ctl-delete", v1alpha1.DisruptionReasonEmpty)); got != 1 {
		t.Errorf("allowed disruptions gauge %v, want 1 (as evaluated before the deletion)", got)
	}

	// The marked node is no candidate any more: nothing is deleted twice.
	w.clk.Step(10 * time.Second)
	fatalIf(t, w.ctrl.RunOnce(t.Context()))
	if got := w.writer.take(); len(got) != 0 {
		t.Errorf("deleted %q again", got)
	}
	if got := testutil.ToFloat64(disruption.AllowedDisruptions.WithLabelValues("ctl-delete", v1alpha1.DisruptionReasonEmpty)); got != 0 {
		t.Errorf("allowed disruptions gauge %v, want 0 while a node is being deleted", got)
	}
}

func TestControllerPublishesBlockedOncePerReason(t *testing.T) {
	w := newWorld(pool("ctl-blocked", "0s", budget("0", "", 0)))
	w.add(node("a", "ctl-blocked", 0))
	want := []string{"NodeClaim/a DisruptionBlocked", "Node/a DisruptionBlocked"}
	fatalIf(t, w.ctrl.RunOnce(t.Context()))
	if got := w.recorder.take(); !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	fatalIf(t, w.ctrl.RunOnce(t.Context()))
	if got := w.recorder.take(); len(got) != 0 {
		t.Fatalf("events %q on the second round, want none: the reason has not changed", got)
	}
	// Now a do-not-disrupt pod blocks it instead of the budget.
	w.add(node("a", "ctl-blocked", 0, annotated(daemonPod("ds"), v1alpha1.AnnotationDoNotDisrupt)))
	fatalIf(t, w.ctrl.RunOnce(t.Context()))
	if got := w.recorder.take(); !slices.Equal(got, want) {
		t.Fatalf("events %q once the reason changed, want %q", got, want)
	}
	if got := w.writer.take(); len(got) != 0 {
		t.Errorf("deleted %q, want none", got)
	}
}

func TestControllerDeletionFailures(t *testing.T) {
	gr := schema.GroupResource{Group: v1alpha1.Group, Resource: "nodeclaims"}
	for _, tc := range []struct {
		name       string
		err        error
		wantErr    bool
		wantMarked []string
	}{
		{name: "a failed deletion unmarks the node and is returned", err: errors.New("boom"), wantErr: true},
		{name: "a claim already gone is no failure", err: apierrors.NewNotFound(gr, "a"), wantMarked: []string{"a"}},
		{name: "a claim replaced under the same name is left alone", err: apierrors.NewConflict(gr, "a", errors.New("uid")), wantMarked: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(pool("ctl-fail", "0s"))
			w.add(node("a", "ctl-fail", 0))
			w.writer.err = tc.err
			if err := w.ctrl.RunOnce(t.Context()); (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want one: %v", err, tc.wantErr)
			}
			if got := w.marked(); !slices.Equal(got, tc.wantMarked) {
				t.Errorf("marked %q, want %q", got, tc.wantMarked)
			}
			if got := w.recorder.take(); len(got) != 0 {
				t.Errorf("events %q, want none", got)
			}
		})
	}
}

func TestControllerWaitsForSync(t *testing.T) {
	w := newWorld(pool("ctl-sync", "0s"))
	w.add(node("a", "ctl-sync", 0))
	synced := false
	w.cluster.AddSyncCheck(func() bool { return synced })
	if err := w.ctrl.RunOnce(t.Context()); !errors.Is(err, disruption.ErrNotSynced) {
		t.Fatalf("error %v, want ErrNotSynced", err)
	}
	if got := w.writer.take(); len(got) != 0 {
		t.Fatalf("deleted %q on an unsynced state", got)
	}
	synced = true
	fatalIf(t, w.ctrl.RunOnce(t.Context()))
	if got, want := w.writer.take(), []string{"a"}; !slices.Equal(got, want) {
		t.Fatalf("deleted %q, want %q", got, want)
	}
}

// countingMethod counts the rounds that reach it.
type countingMethod struct {
	disruption.Method
	rounds int
}

func (m *countingMethod) ComputeCommands(ctx context.Context, b disruption.Budgets, cs []*disruption.Candidate) ([]disruption.Command, error) {
	m.rounds++
	return m.Method.ComputeCommands(ctx, b, cs)
}

func TestControllerSkipsRoundsWhileNothingChanges(t *testing.T) {
	w := newWorld(pool("ctl-settled", "30s"))
	m := &countingMethod{Method: disruption.NewEmptiness(w.clk)}
	w.ctrl = disruption.New(w.clk, w.cluster, w.writer, disruption.Options{Recorder: w.recorder, Methods: []disruption.Method{m}})
	w.add(node("busy", "ctl-settled", 0, pod("web")))

	for range 3 {
		fatalIf(t, w.ctrl.RunOnce(t.Context()))
		w.clk.Step(10 * time.Second)
	}
	if m.rounds != 1 {
		t.Fatalf("%d rounds on an unchanged state with nothing to do, want 1", m.rounds)
	}
	// A change (the pod goes) makes the next round run; the empty node then
	// waits out consolidateAfter, and every round runs until it goes.
	w.cluster.DeletePod(pod("web"))
	for range 4 {
		fatalIf(t, w.ctrl.RunOnce(t.Context()))
		w.clk.Step(10 * time.Second)
	}
	if m.rounds != 5 {
		t.Errorf("%d rounds, want 5: one before, then one per round while a node waits", m.rounds)
	}
	if got := w.writer.take(); !slices.Equal(got, []string{"busy"}) {
		t.Errorf("deleted %q, want busy once it has been empty 30s", got)
	}
}
