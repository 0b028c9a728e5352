package disruption_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/disruption"
	"github.com/stowage-dev/stowage/controller/state/statetest"
)

// Emptiness on the API server: after consolidateAfter (counted from the last
// pod event the informers delivered) and the validation delay, the empty
// node's claim is deleted and the busy one's stays.
func TestEmptinessOnAPIServer(t *testing.T) {
	b := newBed(t, disruption.Options{})
	b.pool(t, pool("empty-api", "5m"))
	idle := node("empty-api-idle", "empty-api", 0)
	idle.NodeClaim.Status.Conditions[0].LastTransitionTime = metav1.NewTime(epoch) // initialized now: empty since
	b.node(t, idle)
	b.node(t, node("empty-api-busy", "empty-api", 0, sized("web", "100m", "128Mi")))
	b.seen(t, map[string]int{"empty-api-idle": 0, "empty-api-busy": 1})

	b.round(t, 0)
	if got := b.rec.take(); len(got) != 0 {
		t.Fatalf("events %q in the first round, want none", got)
	}
	b.round(t, 5*time.Minute) // consolidateAfter is over: validating
	if got := b.claims(t); len(got) != 2 {
		t.Fatalf("claims %q while the command validates, want both", got)
	}
	b.round(t, disruption.DefaultValidationDelay)
	b.gone(t, "empty-api-idle")
	if got, want := b.exec.take(), []string{"emptiness:delete[empty-api-idle]"}; !slices.Equal(got, want) {
		t.Errorf("executed %q, want %q", got, want)
	}
	want := []string{"NodeClaim/empty-api-idle Disrupting", "Node/empty-api-idle Disrupting"}
	if got := b.rec.take(); !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}

// Consolidation replaces before it deletes: the replacement is launched, the
// node tainted, and its claim deleted only once the replacement is
// Initialized; the savings are booked.
func TestConsolidationReplacesBeforeDeletingOnAPIServer(t *testing.T) {
	b := newBed(t, disruption.Options{})
	b.pool(t, onDemand("replace-api"))
	b.node(t, node("replace-api-a", "replace-api", 0, sized("web", "1500m", "4Gi")))
	b.seen(t, map[string]int{"replace-api-a": 1})
	savings := testutil.ToFloat64(disruption.Savings.WithLabelValues("replace-api", "single-node"))

	b.round(t, 0)                                 // decided: validating
	b.round(t, disruption.DefaultValidationDelay) // validated: the replacement is launched
	reps := b.replacements(t)
	if len(reps) != 1 {
		t.Fatalf("replacements %d, want 1", len(reps))
	}
	rep := reps[0]
	if got := rep.Annotations[v1alpha1.AnnotationReplacedInstanceTypes]; got != "medium" {
		t.Errorf("the replacement records replaced types %q, want medium", got)
	}
	if !b.tainted(t, "replace-api-a") {
		t.Error("the candidate is not tainted while its replacement launches")
	}
	b.round(t, disruption.DefaultInterval)
	if got := b.claims(t); !slices.Contains(got, "replace-api-a") {
		t.Fatalf("claims %q: the candidate went before its replacement was initialized", got)
	}
	b.initialize(t, rep, "small")
	b.round(t, disruption.DefaultInterval)
	b.gone(t, "replace-api-a")
	if got, want := b.exec.take(), "single-node:replace[replace-api-a]+"+rep.Name; len(got) == 0 || got[0] != want {
		t.Errorf("executed %q, want %q", got, want)
	}
	if got := testutil.ToFloat64(disruption.Savings.WithLabelValues("replace-api", "single-node")) - savings; got < 0.19 || got > 0.21 {
		t.Errorf("savings booked %.3f $/h, want 0.20 (medium 0.40 for small 0.20)", got)
	}
}

// A replacement that fails to launch (its claim is deleted, as the lifecycle
// controller does on a launch timeout) rolls the command back: the node is
// untainted, takes pods again and keeps its claim.
func TestRollbackOnAFailedReplacementOnAPIServer(t *testing.T) {
	b := newBed(t, disruption.Options{})
	b.pool(t, onDemand("rollback-api"))
	b.node(t, node("rollback-api-a", "rollback-api", 0, sized("web", "1500m", "4Gi")))
	b.seen(t, map[string]int{"rollback-api-a": 1})
	failed := testutil.ToFloat64(disruption.Commands.WithLabelValues("single-node", disruption.ResultFailed))

	b.round(t, 0)
	b.round(t, disruption.DefaultValidationDelay)
	reps := b.replacements(t)
	if len(reps) != 1 || !b.tainted(t, "rollback-api-a") {
		t.Fatalf("replacements %d, tainted %v; want one and tainted", len(reps), b.tainted(t, "rollback-api-a"))
	}
	fatalIf(t, b.env.Client.Delete(t.Context(), reps[0]))
	statetest.Eventually(t, 30*time.Second, func() error {
		b.round(t, 0)
		if b.tainted(t, "rollback-api-a") {
			return errString("still tainted")
		}
		return nil
	})
	if got := b.claims(t); !slices.Equal(got, []string{"rollback-api-a"}) {
		t.Errorf("claims %q, want the candidate's only", got)
	}
	if got := testutil.ToFloat64(disruption.Commands.WithLabelValues("single-node", disruption.ResultFailed)) - failed; got != 1 {
		t.Errorf("failed commands rose by %v, want 1", got)
	}
	if got := b.rec.notes(disruption.ReasonDisruptionFailed); len(got) != 2 || !strings.Contains(got[0], "deleted before it was initialized") {
		t.Errorf("DisruptionFailed events %q, want one on the claim and one on the node naming the replacement", got)
	}
	// Trying again at once would likely fail the same way: the node is left
	// alone for the recent window.
	b.round(t, disruption.DefaultInterval)
	b.round(t, disruption.DefaultValidationDelay)
	if got := len(b.replacements(t)); got != 0 {
		t.Errorf("%d replacements launched again right after a rollback, want none", got)
	}
	if got := strings.Join(b.rec.notes(disruption.ReasonDisruptionBlocked), "\n"); !strings.Contains(got, "rolled back; it is not consolidated again before") {
		t.Errorf("blocked events %q, want the rollback named", got)
	}
}

// Multi-node consolidation on the API server: four half-empty nodes are
// deleted in one command with one replacement.
func TestMultiNodeConsolidationOnAPIServer(t *testing.T) {
	b := newBed(t, disruption.Options{ValidationDelay: -1})
	b.pool(t, onDemand("multi-api"))
	want := map[string]int{}
	for _, n := range []string{"a", "b", "c", "d"} {
		name := "multi-api-" + n
		b.node(t, node(name, "multi-api", 0, sized("w-"+n, "500m", "1Gi")))
		want[name] = 1
	}
	b.seen(t, want)
	b.round(t, 0)
	reps := b.replacements(t)
	if len(reps) != 1 {
		t.Fatalf("replacements %d, want 1", len(reps))
	}
	b.initialize(t, reps[0], "medium")
	b.round(t, disruption.DefaultInterval)
	if got, want := b.exec.take(), "multi-node:replace[multi-api-a multi-api-b multi-api-c multi-api-d]+"+reps[0].Name; len(got) == 0 || got[0] != want {
		t.Errorf("executed %q, want %q", got, want)
	}
}

// Drift on the API server: a claim whose Drifted condition is True is
// replaced, without a validation delay, within the Drifted budget.
func TestDriftOnAPIServer(t *testing.T) {
	b := newBed(t, disruption.Options{})
	b.pool(t, onDemand("drift-api"))
	b.node(t, drifted(node("drift-api-a", "drift-api", 0, sized("web", "3", "4Gi"))))
	b.seen(t, map[string]int{"drift-api-a": 1})
	b.round(t, 0)
	reps := b.replacements(t)
	if len(reps) != 1 {
		t.Fatalf("replacements %d, want 1 at once", len(reps))
	}
	b.initialize(t, reps[0], "medium")
	b.round(t, disruption.DefaultInterval)
	b.gone(t, "drift-api-a")
	if got, want := b.exec.take(), "drift:replace[drift-api-a]+"+reps[0].Name; len(got) == 0 || got[0] != want {
		t.Errorf("executed %q, want %q", got, want)
	}
}

// Budget shapes on the API server: a count, a percentage, and a schedule
// window checked at chosen fake-clock times.
func TestBudgetShapesOnAPIServer(t *testing.T) {
	const business = "0 9 * * 1-5" // weekdays 09:00 UTC, for 8h
	monday10 := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	monday18 := time.Date(2026, 11, 2, 18, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		budgets []v1alpha1.Budget
		at      time.Time
		want    int
	}{
		{name: "count", budgets: []v1alpha1.Budget{budget("1", "", 0)}, at: epoch, want: 1},
		{name: "percentage", budgets: []v1alpha1.Budget{budget("50%", "", 0)}, at: epoch, want: 2},
		{name: "inside-window", budgets: []v1alpha1.Budget{budget("100%", "", 0), budget("0", business, 8*time.Hour)}, at: monday10, want: 0},
		{name: "outside-window", budgets: []v1alpha1.Budget{budget("100%", "", 0), budget("0", business, 8*time.Hour)}, at: monday18, want: 4},
		{name: "other-reason", budgets: []v1alpha1.Budget{budget("100%", "", 0), budget("0", "", 0, v1alpha1.DisruptionReasonDrifted)}, at: epoch, want: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBed(t, disruption.Options{ValidationDelay: -1})
			name := "budget-" + tc.name
			b.pool(t, pool(name, "0s", tc.budgets...))
			want := map[string]int{}
			for i := range 4 {
				n := node(name+"-"+string(rune('a'+i)), name, time.Duration(i)*time.Minute)
				b.node(t, n)
				want[n.Name()] = 0
			}
			b.seen(t, want)
			b.env.Clock.SetTime(tc.at)
			b.round(t, 0)
			statetest.Eventually(t, 30*time.Second, func() error {
				if got := len(b.claims(t)); got != 4-tc.want {
					return errString("claims left: " + strings.Join(b.claims(t), ","))
				}
				return nil
			})
			if got := testutil.ToFloat64(disruption.AllowedDisruptions.WithLabelValues(name, v1alpha1.DisruptionReasonEmpty)); int(got) != tc.want {
				t.Errorf("allowed disruptions gauge %v, want %d", got, tc.want)
			}
			if tc.want < 4 {
				if got := b.rec.notes(disruption.ReasonDisruptionBlocked); len(got) == 0 || !strings.Contains(got[0], "blocked by budget") {
					t.Errorf("blocked events %q, want the budget named", got)
				}
			}
		})
	}
}

// PDB blocking and both do-not-disrupt forms on the API server, and the
// blocked-candidates metric by blocker.
func TestBlockersOnAPIServer(t *testing.T) {
	b := newBed(t, disruption.Options{ValidationDelay: -1})
	b.pool(t, onDemand("block-api"))
	guarded := sized("guarded", "1500m", "4Gi")
	forever := annotated(sized("forever", "1500m", "4Gi"), v1alpha1.AnnotationKarpenterDoNotDisrupt)
	anHour := annotatedWith(sized("an-hour", "1500m", "4Gi"), v1alpha1.AnnotationDoNotDisrupt, "1h")
	b.node(t, node("block-api-pdb", "block-api", 0, guarded))
	b.node(t, node("block-api-forever", "block-api", 0, forever))
	b.node(t, node("block-api-hour", "block-api", 0, anHour))
	b.seen(t, map[string]int{"block-api-pdb": 1, "block-api-forever": 1, "block-api-hour": 1})
	// Running pods' start times, as the kubelet writes them.
	for _, name := range []string{"an-hour", "forever", "guarded"} {
		p := &corev1.Pod{}
		fatalIf(t, b.env.Client.Get(t.Context(), client.ObjectKey{Namespace: b.env.Namespace, Name: name}, p))
		p.Status.StartTime = &metav1.Time{Time: epoch}
		fatalIf(t, b.env.Client.Status().Update(t.Context(), p))
	}
	budget := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: b.env.Namespace, Name: "guarded"},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptrTo(intstr.FromInt32(0)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}}}}
	b.env.Create(t, budget) // status disruptionsAllowed 0, as kube-controller-manager would write it
	statetest.Eventually(t, 30*time.Second, func() error {
		if len(b.env.Cluster.PodDisruptionBudgets()) == 0 {
			return errString("the PDB is not in the cluster state")
		}
		return nil
	})

	b.round(t, 0)
	for _, blocker := range []string{disruption.BlockedPDB, disruption.BlockedDoNotDisrupt} {
		want := map[string]float64{disruption.BlockedPDB: 1, disruption.BlockedDoNotDisrupt: 2}[blocker]
		if got := testutil.ToFloat64(disruption.BlockedCandidates.WithLabelValues("single-node", blocker)); got != want {
			t.Errorf("blocked candidates by %s %v, want %v", blocker, got, want)
		}
	}
	notes := strings.Join(b.rec.notes(disruption.ReasonDisruptionBlocked), "\n")
	for _, want := range []string{"PodDisruptionBudget " + b.env.Namespace + "/guarded allows no disruption",
		"pod " + b.env.Namespace + "/forever is annotated do-not-disrupt",
		"pod " + b.env.Namespace + "/an-hour is annotated do-not-disrupt until 2026-11-01T03:00:00Z"} {
		if !strings.Contains(notes, want) {
			t.Errorf("blocked events do not say %q:\n%s", want, notes)
		}
	}
	if got := len(b.replacements(t)); got != 0 {
		t.Fatalf("%d replacements while every node is blocked", got)
	}
	// An hour after the pod started its protection is over: its pod fits on
	// the other nodes, and its node goes.
	b.round(t, time.Hour)
	b.gone(t, "block-api-hour")
	if got := b.claims(t); !slices.Equal(got, []string{"block-api-forever", "block-api-pdb"}) {
		t.Errorf("claims %q, want the blocked nodes'", got)
	}
}

// Issue 9 on the API server: a node chosen for pending pods is not empty.
func TestANominatedNodeIsNotEmptyOnAPIServer(t *testing.T) {
	b := newBed(t, disruption.Options{ValidationDelay: -1})
	b.pool(t, pool("nominated-api", "0s"))
	b.node(t, node("nominated-api-a", "nominated-api", 0))
	b.seen(t, map[string]int{"nominated-api-a": 0})
	pending := statetest.Unschedulable(statetest.Pod(b.env.Namespace, "pending", "1", "1Gi"))
	b.env.Create(t, pending)
	statetest.Eventually(t, 30*time.Second, func() error {
		if len(b.env.Cluster.PendingPods()) == 0 {
			return errString("the pending pod is not in the cluster state")
		}
		return nil
	})
	// Long after the node came up, the provisioner chooses it for the pod;
	// the round comes before kube-scheduler binds it.
	b.env.Clock.Step(time.Hour)
	b.env.Cluster.Nominate(pending, "nominated-api-a")
	b.round(t, time.Second)
	if got := b.claims(t); !slices.Equal(got, []string{"nominated-api-a"}) {
		t.Fatalf("claims %q: the node chosen for a pending pod was deleted", got)
	}
	if got := b.rec.notes(disruption.ReasonDisruptionBlocked); len(got) == 0 || !strings.Contains(got[0], "pending pods are expected on it") {
		t.Errorf("blocked events %q, want the nomination named", got)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

func ptrTo[T any](v T) *T { return &v }

// A command is dropped when the world changes while it validates: here a pod
// lands on the empty node.
func TestValidationDropsACommandTheWorldOvertookOnAPIServer(t *testing.T) {
	b := newBed(t, disruption.Options{})
	b.pool(t, pool("drop-api", "0s"))
	b.node(t, node("drop-api-a", "drop-api", 0))
	b.seen(t, map[string]int{"drop-api-a": 0})
	dropped := testutil.ToFloat64(disruption.Commands.WithLabelValues("emptiness", disruption.ResultDropped))
	b.round(t, 0) // decided, validating
	web := sized("web", "100m", "128Mi")
	web.Namespace, web.UID, web.Spec.NodeName = b.env.Namespace, "", "drop-api-a"
	b.env.Create(t, web)
	b.seen(t, map[string]int{"drop-api-a": 1})
	b.round(t, disruption.DefaultValidationDelay)
	if got := b.claims(t); !slices.Equal(got, []string{"drop-api-a"}) {
		t.Fatalf("claims %q, want the node kept", got)
	}
	if got := testutil.ToFloat64(disruption.Commands.WithLabelValues("emptiness", disruption.ResultDropped)) - dropped; got != 1 {
		t.Errorf("dropped commands rose by %v, want 1", got)
	}
}

// The return on the API server: an on-demand node of a pool that allows spot
// is replaced by a spot node at once (no validation delay), the replacement
// pinned to spot and recording the Fallback reason; the node goes once the
// replacement is initialized, and the event and metric say where it went.
func TestReturnToSpotOnAPIServer(t *testing.T) {
	b := newBed(t, disruption.Options{})
	b.pool(t, returning("return-api", 100, v1alpha1.CapacityTypeSpot, v1alpha1.CapacityTypeOnDemand))
	b.node(t, node("return-api-a", "return-api", 0, sized("web", "1500m", "4Gi")))
	b.seen(t, map[string]int{"return-api-a": 1})
	returned := testutil.ToFloat64(disruption.Returns.WithLabelValues("return-api", v1alpha1.CapacityTypeOnDemand, "return-api", v1alpha1.CapacityTypeSpot))

	b.round(t, 0)
	reps := b.replacements(t)
	if len(reps) != 1 {
		t.Fatalf("replacements %d, want 1", len(reps))
	}
	rep := reps[0]
	if got := rep.Annotations[v1alpha1.AnnotationDisruptionReason]; got != v1alpha1.DisruptionReasonFallback {
		t.Errorf("the replacement records reason %q, want Fallback", got)
	}
	if !slices.ContainsFunc(rep.Spec.Requirements, func(r v1alpha1.NodeSelectorRequirementWithMinValues) bool {
		return r.Key == v1alpha1.LabelCapacityType && slices.Equal(r.Values, []string{v1alpha1.CapacityTypeSpot})
	}) {
		t.Errorf("the replacement is not pinned to spot: %v", rep.Spec.Requirements)
	}
	b.initialize(t, rep, "small")
	b.round(t, disruption.DefaultInterval)
	b.gone(t, "return-api-a")
	notes := b.rec.notes(disruption.ReasonDisrupting)
	if len(notes) == 0 || !strings.Contains(notes[0], "runs them on-demand, a fallback: spot capacity of nodepool return-api") {
		t.Errorf("Disrupting notes %q do not say why", notes)
	}
	if got := testutil.ToFloat64(disruption.Returns.WithLabelValues("return-api", v1alpha1.CapacityTypeOnDemand, "return-api", v1alpha1.CapacityTypeSpot)) - returned; got != 1 {
		t.Errorf("returns counted %v, want 1", got)
	}
}
