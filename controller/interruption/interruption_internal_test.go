package interruption

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
)

func TestReasonIsTheKindInCamelCase(t *testing.T) {
	for kind, want := range map[string]string{
		v1alpha1.InterruptionKindSpotInterruption:                "SpotInterruption",
		v1alpha1.InterruptionKindRebalanceRecommendation:         "RebalanceRecommendation",
		v1alpha1.InterruptionKindScheduledChange:                 "ScheduledChange",
		v1alpha1.InterruptionKindInstanceStopping:                "InstanceStopping",
		v1alpha1.InterruptionKindInstanceTerminating:             "InstanceTerminating",
		v1alpha1.InterruptionKindCapacityReservationInterruption: "CapacityReservationInterruption",
	} {
		if got := reason(kind); got != want || nodeclaim.ConditionReason(got) != got {
			t.Errorf("reason(%q) = %q, want %q (a valid condition reason)", kind, got, want)
		}
	}
}

func TestIdentityIsTheEventIDOrTheKindAndDeadline(t *testing.T) {
	deadline := time.Date(2026, 11, 1, 2, 2, 0, 0, time.UTC)
	for _, tc := range []struct {
		m    Mark
		want string
	}{
		{Mark{Kind: "spot-interruption", EventID: "e-1", Deadline: deadline}, "e-1"},
		{Mark{Kind: "scheduled-change", Deadline: deadline}, "scheduled-change@2026-11-01T02:02:00Z"},
		{Mark{Kind: "instance-stopping"}, "instance-stopping@"},
	} {
		if got := tc.m.identity(); got != tc.want {
			t.Errorf("identity(%+v) = %q, want %q", tc.m, got, tc.want)
		}
	}
}

func TestRecordedMatchesOnlyTheSameMark(t *testing.T) {
	deadline := time.Date(2026, 11, 1, 2, 2, 0, 0, time.UTC)
	m := Mark{Kind: "spot-interruption", EventID: "e-1", Deadline: deadline}
	claim := &v1alpha1.NodeClaim{}
	if recorded(claim, m) || recorded(nil, m) {
		t.Fatal("a claim without the Interrupted condition records the mark")
	}
	nodeclaim.SetCondition(claim, v1alpha1.ConditionInterrupted, metav1.ConditionTrue, reason(m.Kind), conditionMessage(m), deadline)
	if !recorded(claim, m) {
		t.Errorf("condition %+v does not record %+v", claim.Status.Conditions, m)
	}
	if other := (Mark{Kind: "instance-terminating", EventID: "e-2"}); recorded(claim, other) {
		t.Errorf("condition %+v records %+v too", claim.Status.Conditions, other)
	}
}

func TestSeenKeepsProgressPerMarkAndNode(t *testing.T) {
	s := seen{m: map[string]progress{}}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", UID: "u-1"}}
	first, second := Mark{Kind: "spot-interruption", EventID: "e-1"}, Mark{Kind: "instance-terminating", EventID: "e-2"}

	p := s.get(nodeTarget(node), first)
	p.received, p.done, p.replaced = true, true, true
	s.put(node.Name, p)
	if got := s.get(nodeTarget(node), first); !got.done {
		t.Errorf("progress on the same mark = %+v, want done", got)
	}
	if got := s.get(nodeTarget(node), second); got.done || got.received || !got.replaced {
		t.Errorf("progress on a new mark = %+v, want fresh but remembering the replacement", got)
	}
	recreated := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", UID: "u-2"}}
	if got := s.get(nodeTarget(recreated), first); got.done || got.replaced {
		t.Errorf("progress on a new node of the same name = %+v, want fresh", got)
	}
	s.forget(node.Name)
	if got := s.get(nodeTarget(node), first); got.done {
		t.Errorf("progress after forget = %+v, want fresh", got)
	}
}

func TestMalformedEventNamesTheAnnotationAndBoundsTheValue(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
	long := strings.Repeat("x", 500)
	e := malformedEvent(node, v1alpha1.AnnotationInterruptionDeadline, long)
	if e.Type != corev1.EventTypeWarning || len(e.Note) > 300 {
		t.Errorf("event = %s with a %d-byte note, want a Warning with the value cut short", e.Type, len(e.Note))
	}
	for _, key := range []string{v1alpha1.AnnotationInterruptionDeadline, v1alpha1.AnnotationInterruptionKind} {
		if e := malformedEvent(node, key, "x"); !strings.Contains(e.Note, key) {
			t.Errorf("note %q does not name %s", e.Note, key)
		}
	}
}
