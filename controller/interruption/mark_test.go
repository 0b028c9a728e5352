package interruption_test

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/interruption"
)

var (
	notice   = time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	spotMark = interruption.Mark{Kind: v1alpha1.InterruptionKindSpotInterruption, Deadline: notice.Add(2 * time.Minute), EventID: "e-1"}
)

func plainNode() *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{"other": "kept"}},
		Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}},
	}
}

func TestMarkNodeWritesTheFormatMarksReads(t *testing.T) {
	node := plainNode()
	if !interruption.MarkNode(node, spotMark) {
		t.Fatal("marking an unmarked node reported no change")
	}
	want := map[string]string{
		"other":                                 "kept",
		v1alpha1.AnnotationInterruptionKind:     "spot-interruption",
		v1alpha1.AnnotationInterruptionDeadline: "2026-11-01T02:02:00Z",
		v1alpha1.AnnotationInterruptionEventID:  "e-1",
	}
	for k, v := range want {
		if node.Annotations[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, node.Annotations[k], v)
		}
	}
	wantTaints := []corev1.Taint{
		{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule},
		{Key: v1alpha1.TaintKeyInterrupted, Value: "spot-interruption", Effect: corev1.TaintEffectNoSchedule},
	}
	if !slices.Equal(node.Spec.Taints, wantTaints) {
		t.Errorf("taints = %v, want %v", node.Spec.Taints, wantTaints)
	}
	got, ok := interruption.Marks(node)
	if !ok || got.Kind != spotMark.Kind || !got.Deadline.Equal(spotMark.Deadline) || got.EventID != "e-1" || len(got.Malformed) != 0 {
		t.Errorf("Marks = %+v, %v; want %+v", got, ok, spotMark)
	}
}

func TestMarkNodeWithoutDeadlineOrEventID(t *testing.T) {
	node := plainNode()
	interruption.MarkNode(node, interruption.Mark{Kind: v1alpha1.InterruptionKindInstanceStopping})
	for _, k := range []string{v1alpha1.AnnotationInterruptionDeadline, v1alpha1.AnnotationInterruptionEventID} {
		if v, ok := node.Annotations[k]; ok {
			t.Errorf("annotation %s = %q, want it absent", k, v)
		}
	}
	if got, ok := interruption.Marks(node); !ok || !got.Deadline.IsZero() || got.EventID != "" {
		t.Errorf("Marks = %+v, %v; want an instance-stopping mark without deadline or event id", got, ok)
	}
}

func TestMarkNodeIsIdempotentAndKeepsWhatIsMostUrgent(t *testing.T) {
	for _, tc := range []struct {
		name    string
		next    interruption.Mark
		changed bool
		want    interruption.Mark
	}{
		{"same event id, even with other details", interruption.Mark{Kind: v1alpha1.InterruptionKindScheduledChange, EventID: "e-1"},
			false, spotMark},
		{"rebalance after a spot interruption", interruption.Mark{Kind: v1alpha1.InterruptionKindRebalanceRecommendation, EventID: "e-2"},
			false, spotMark},
		{"state change without a deadline keeps the deadline",
			interruption.Mark{Kind: v1alpha1.InterruptionKindInstanceTerminating, EventID: "e-3"}, true,
			interruption.Mark{Kind: v1alpha1.InterruptionKindInstanceTerminating, Deadline: spotMark.Deadline, EventID: "e-3"}},
		{"a later deadline keeps the earlier one",
			interruption.Mark{Kind: v1alpha1.InterruptionKindScheduledChange, Deadline: notice.Add(time.Hour), EventID: "e-4"}, true,
			interruption.Mark{Kind: v1alpha1.InterruptionKindScheduledChange, Deadline: spotMark.Deadline, EventID: "e-4"}},
		{"an earlier deadline replaces it",
			interruption.Mark{Kind: v1alpha1.InterruptionKindScheduledChange, Deadline: notice.Add(time.Minute), EventID: "e-5"}, true,
			interruption.Mark{Kind: v1alpha1.InterruptionKindScheduledChange, Deadline: notice.Add(time.Minute), EventID: "e-5"}},
	} {
		node := plainNode()
		interruption.MarkNode(node, spotMark)
		if changed := interruption.MarkNode(node, tc.next); changed != tc.changed {
			t.Errorf("%s: changed = %v, want %v", tc.name, changed, tc.changed)
		}
		got, _ := interruption.Marks(node)
		if got.Kind != tc.want.Kind || !got.Deadline.Equal(tc.want.Deadline) || got.EventID != tc.want.EventID {
			t.Errorf("%s: mark = %+v, want %+v", tc.name, got, tc.want)
		}
		if n := countInterruptedTaints(node, tc.want.Kind); n != 1 {
			t.Errorf("%s: %d interrupted taints valued %s, want exactly 1 (taints %v)", tc.name, n, tc.want.Kind, node.Spec.Taints)
		}
	}
}

func countInterruptedTaints(node *corev1.Node, kind string) int {
	n := 0
	for _, taint := range node.Spec.Taints {
		if taint.Key == v1alpha1.TaintKeyInterrupted {
			if taint.Value != kind || taint.Effect != corev1.TaintEffectNoSchedule {
				return -1
			}
			n++
		}
	}
	return n
}

func TestRebalanceReplacesARebalanceMark(t *testing.T) {
	node := plainNode()
	interruption.MarkNode(node, interruption.Mark{Kind: v1alpha1.InterruptionKindRebalanceRecommendation, EventID: "e-1"})
	if !interruption.MarkNode(node, interruption.Mark{Kind: v1alpha1.InterruptionKindRebalanceRecommendation, EventID: "e-2"}) {
		t.Error("a new rebalance recommendation did not replace the previous one")
	}
	if got, _ := interruption.Marks(node); got.EventID != "e-2" {
		t.Errorf("event id = %q, want e-2", got.EventID)
	}
}

func TestMarksReportsWhatItCannotRead(t *testing.T) {
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		ok          bool
		malformed   []string
		deadline    time.Time
	}{
		{"no mark", map[string]string{"other": "x"}, false, nil, time.Time{}},
		{"empty kind", map[string]string{v1alpha1.AnnotationInterruptionKind: ""}, false, nil, time.Time{}},
		{"unknown kind", map[string]string{v1alpha1.AnnotationInterruptionKind: "meteor-strike"}, true,
			[]string{v1alpha1.AnnotationInterruptionKind}, time.Time{}},
		{"malformed deadline", map[string]string{v1alpha1.AnnotationInterruptionKind: "scheduled-change",
			v1alpha1.AnnotationInterruptionDeadline: "next Tuesday"}, true, []string{v1alpha1.AnnotationInterruptionDeadline}, time.Time{}},
		{"deadline with an offset, read as UTC", map[string]string{v1alpha1.AnnotationInterruptionKind: "scheduled-change",
			v1alpha1.AnnotationInterruptionDeadline: "2026-11-01T03:00:00+01:00"}, true, nil, notice},
		{"empty deadline is none", map[string]string{v1alpha1.AnnotationInterruptionKind: "scheduled-change",
			v1alpha1.AnnotationInterruptionDeadline: ""}, true, nil, time.Time{}},
	} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Annotations: tc.annotations}}
		m, ok := interruption.Marks(node)
		if ok != tc.ok || !slices.Equal(m.Malformed, tc.malformed) || !m.Deadline.Equal(tc.deadline) {
			t.Errorf("%s: Marks = %+v, %v; want ok %v, malformed %v, deadline %v", tc.name, m, ok, tc.ok, tc.malformed, tc.deadline)
		}
		if ok && m.Deadline.Location() != time.UTC {
			t.Errorf("%s: deadline %v is not in UTC", tc.name, m.Deadline)
		}
	}
}

func TestMarkedPassesMarkedNodesAndTheRemovalOfAMark(t *testing.T) {
	marked := plainNode()
	interruption.MarkNode(marked, spotMark)
	plain := plainNode()
	p := interruption.Marked()
	for _, tc := range []struct {
		name string
		pass bool
		want bool
	}{
		{"create marked", p.Create(event.CreateEvent{Object: marked}), true},
		{"create plain", p.Create(event.CreateEvent{Object: plain}), false},
		{"update plain", p.Update(event.UpdateEvent{ObjectOld: plain, ObjectNew: plain}), false},
		{"mark added", p.Update(event.UpdateEvent{ObjectOld: plain, ObjectNew: marked}), true},
		{"mark removed", p.Update(event.UpdateEvent{ObjectOld: marked, ObjectNew: plain}), true},
		{"delete marked", p.Delete(event.DeleteEvent{Object: marked}), true},
		{"generic plain", p.Generic(event.GenericEvent{Object: plain}), false},
	} {
		if tc.pass != tc.want {
			t.Errorf("%s: passes = %v, want %v", tc.name, tc.pass, tc.want)
		}
	}
}

func TestKnownKind(t *testing.T) {
	for _, kind := range v1alpha1.InterruptionKinds {
		if !interruption.KnownKind(kind) {
			t.Errorf("KnownKind(%q) = false", kind)
		}
	}
	for _, kind := range []string{"", "Spot-Interruption", "meteor-strike"} {
		if interruption.KnownKind(kind) {
			t.Errorf("KnownKind(%q) = true", kind)
		}
	}
}

// TestMarkClaimWritesTheAnnotationsByTheSameRules: a claim gets the three
// annotations and nothing else, keeps the earliest deadline, and is not
// changed by the same event again.
func TestMarkClaimWritesTheAnnotationsByTheSameRules(t *testing.T) {
	claim := &v1alpha1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c"}}
	if !interruption.MarkClaim(claim, spotMark) {
		t.Fatal("marking an unmarked claim reported no change")
	}
	if got, ok := interruption.Marks(claim); !ok || got.Kind != spotMark.Kind || !got.Deadline.Equal(spotMark.Deadline) || got.EventID != "e-1" {
		t.Errorf("Marks = %+v, %v; want %+v", got, ok, spotMark)
	}
	if len(claim.Annotations) != 3 || len(claim.Spec.Taints) != 0 {
		t.Errorf("claim has annotations %v and taints %v, want the three mark annotations only", claim.Annotations, claim.Spec.Taints)
	}
	if interruption.MarkClaim(claim, spotMark) {
		t.Error("marking a claim again with the event id it carries changed it")
	}
	later := interruption.Mark{Kind: v1alpha1.InterruptionKindInstanceTerminating, Deadline: notice.Add(time.Hour), EventID: "e-2"}
	if !interruption.MarkClaim(claim, later) {
		t.Error("a new event changed nothing")
	}
	if got, _ := interruption.Marks(claim); got.Kind != later.Kind || !got.Deadline.Equal(spotMark.Deadline) {
		t.Errorf("after a later mark: %+v, want its kind with the earlier deadline %s", got, spotMark.Deadline)
	}
}
