package interruption_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/interruption"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
	"github.com/stowage-dev/stowage/controller/nodeclaim/nodeclaimtest"
)

// TestSpotInterruptionDeletesTheClaimOnceAndMarksTheOffering: a spot
// interruption mark deletes the Node's claim (recording the mark on its
// Interrupted condition), marks the Node's offering unavailable, reports
// both, and measures how long before the deadline the claim was deleted.
func TestSpotInterruptionDeletesTheClaimOnceAndMarksTheOffering(t *testing.T) {
	w := start(t, interruption.Options{})
	claim, node := w.managed("spot")
	received := nodeclaimtest.CounterValue(t, interruption.Received.WithLabelValues(v1alpha1.InterruptionKindSpotInterruption))
	replaced := nodeclaimtest.CounterValue(t, interruption.Actions.WithLabelValues(interruption.ActionReplace))
	count, sum := margins(t)
	deadline := w.Clock.Now().Add(2 * time.Minute).Truncate(time.Second)

	w.mark(node, interruption.Mark{Kind: v1alpha1.InterruptionKindSpotInterruption, Deadline: deadline, EventID: "e-spot"})
	w.Eventually(settle, w.deleting(claim))
	w.ExpectCounter("actions_total{action=replace}", interruption.Actions.WithLabelValues(interruption.ActionReplace), replaced, 1)
	w.ExpectCounter("received_total{kind=spot-interruption}",
		interruption.Received.WithLabelValues(v1alpha1.InterruptionKindSpotInterruption), received, 1)
	w.event(node.Name, interruption.EventInterruptionReceived, 1)
	if e := w.event(node.Name, interruption.EventReplacingNode, 1)[0]; e.Related != claim.Name || e.Type != corev1.EventTypeNormal {
		t.Errorf("ReplacingNode event = %+v, want a Normal event related to claim %s", e, claim.Name)
	}

	if n := w.kube.deletes.Load(); n != 1 {
		t.Errorf("the controller deleted claims %d times, want 1", n)
	}
	want := []offeringCall{{"m6i.large", "us-east-1a", v1alpha1.CapacityTypeSpot, interruption.ReasonSpotInterruption}}
	if got := w.offerings.marked(); !slices.Equal(got, want) {
		t.Errorf("offerings marked %v, want %v", got, want)
	}
	cond := nodeclaim.Condition(claim, v1alpha1.ConditionInterrupted)
	if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != "SpotInterruption" || !strings.Contains(cond.Message, "e-spot") {
		t.Errorf("claim Interrupted condition = %+v, want True/SpotInterruption naming event e-spot", cond)
	}
	gotCount, gotSum := margins(t)
	if gotCount != count+1 || gotSum-sum <= 110 || gotSum-sum > 120 {
		t.Errorf("deadline margin: %d samples adding %.1fs, want 1 of about 120s", gotCount-count, gotSum-sum)
	}
}

// TestCapacityReservationInterruptionReplacesTheNodeAndMarksItsOffering: the
// owner of an interruptible capacity reservation taking its capacity back
// deletes the claim and marks the reserved offering unavailable, so that the
// replacement does not go back into the shrinking reservation.
func TestCapacityReservationInterruptionReplacesTheNodeAndMarksItsOffering(t *testing.T) {
	w := start(t, interruption.Options{})
	claim, node := w.managed("reserved")
	w.Update(node, func() { node.Labels[v1alpha1.LabelCapacityType] = v1alpha1.CapacityTypeReserved })
	received := nodeclaimtest.CounterValue(t,
		interruption.Received.WithLabelValues(v1alpha1.InterruptionKindCapacityReservationInterruption))

	w.mark(node, interruption.Mark{Kind: v1alpha1.InterruptionKindCapacityReservationInterruption,
		Deadline: w.Clock.Now().Add(2 * time.Minute), EventID: "e-reserved"})
	w.Eventually(settle, w.deleting(claim))
	w.ExpectCounter("received_total{kind=capacity-reservation-interruption}",
		interruption.Received.WithLabelValues(v1alpha1.InterruptionKindCapacityReservationInterruption), received, 1)
	w.event(node.Name, interruption.EventReplacingNode, 1)
	want := []offeringCall{{"m6i.large", "us-east-1a", v1alpha1.CapacityTypeReserved, interruption.ReasonCapacityReservationInterruption}}
	if got := w.offerings.marked(); !slices.Equal(got, want) {
		t.Errorf("offerings marked %v, want %v", got, want)
	}
	cond := nodeclaim.Condition(claim, v1alpha1.ConditionInterrupted)
	if cond == nil || cond.Reason != "CapacityReservationInterruption" {
		t.Errorf("claim Interrupted condition = %+v, want reason CapacityReservationInterruption", cond)
	}
}

// TestRemarkingAndResyncsActOnce: the same mark seen again (marked again with
// its event id, a Node update, a resync) deletes nothing more and marks no
// offering again; a later mark of another kind is reported but the claim,
// already being deleted, is not deleted twice, nor is the Node then taken for
// one Stowage does not manage.
func TestRemarkingAndResyncsActOnce(t *testing.T) {
	w := start(t, interruption.Options{})
	claim, node := w.managed("again")
	mark := interruption.Mark{Kind: v1alpha1.InterruptionKindSpotInterruption,
		Deadline: w.Clock.Now().Add(2 * time.Minute), EventID: "e-first"}
	w.mark(node, mark)
	w.Eventually(settle, w.deleting(claim))
	w.event(node.Name, interruption.EventReplacingNode, 1)

	w.Update(node, func() {
		if interruption.MarkNode(node, mark) {
			t.Error("marking a node again with the event id it carries changed it")
		}
		node.Labels["touched"] = "true"
	})
	w.resync(node)
	w.resync(node)
	if n := w.kube.deletes.Load(); n != 1 {
		t.Errorf("the controller deleted claims %d times, want 1", n)
	}
	if got := w.offerings.marked(); len(got) != 1 {
		t.Errorf("offerings marked %d times, want once: %v", len(got), got)
	}
	if got := w.events.Find(node.Name, interruption.EventInterruptionReceived); len(got) != 1 {
		t.Errorf("%d InterruptionReceived events, want 1", len(got))
	}

	terminating := nodeclaimtest.CounterValue(t, interruption.Received.WithLabelValues(v1alpha1.InterruptionKindInstanceTerminating))
	w.mark(node, interruption.Mark{Kind: v1alpha1.InterruptionKindInstanceTerminating, EventID: "e-second"})
	w.ExpectCounter("received_total{kind=instance-terminating}",
		interruption.Received.WithLabelValues(v1alpha1.InterruptionKindInstanceTerminating), terminating, 1)
	w.event(node.Name, interruption.EventInterruptionReceived, 2)
	w.resync(node)
	if n := w.kube.deletes.Load(); n != 1 {
		t.Errorf("the controller deleted claims %d times, want 1", n)
	}
	if got := w.events.Find(node.Name, interruption.EventNodeNotManaged); len(got) != 0 {
		t.Errorf("NodeNotManaged events %v, want none", got)
	}
	if got := w.offerings.marked(); len(got) != 1 {
		t.Errorf("offerings marked %d times, want once: %v", len(got), got)
	}
}

// TestRebalanceRecommendation: a rebalance recommendation is reported and
// counted but leaves the Node alone, unless ReplaceOnRebalance is set; it
// never marks the offering.
func TestRebalanceRecommendation(t *testing.T) {
	rebalance := interruption.Mark{Kind: v1alpha1.InterruptionKindRebalanceRecommendation, EventID: "e-rebalance"}
	t.Run("is reported only by default", func(t *testing.T) {
		w := start(t, interruption.Options{})
		claim, node := w.managed("rebalance")
		none := nodeclaimtest.CounterValue(t, interruption.Actions.WithLabelValues(interruption.ActionNone))

		w.mark(node, rebalance)
		e := w.event(node.Name, interruption.EventInterruptionReceived, 1)[0]
		w.ExpectCounter("actions_total{action=none}", interruption.Actions.WithLabelValues(interruption.ActionNone), none, 1)
		w.resync(node)
		w.notDeleted(claim)
		if !strings.Contains(e.Note, "not replaced") {
			t.Errorf("InterruptionReceived note %q does not say the node is not replaced", e.Note)
		}
		if got := w.offerings.marked(); len(got) != 0 {
			t.Errorf("offerings marked %v, want none", got)
		}
	})
	t.Run("replaces the node with ReplaceOnRebalance", func(t *testing.T) {
		w := start(t, interruption.Options{ReplaceOnRebalance: true})
		claim, node := w.managed("rebalance")

		w.mark(node, rebalance)
		w.Eventually(settle, w.deleting(claim))
		w.event(node.Name, interruption.EventReplacingNode, 1)
		if got := w.offerings.marked(); len(got) != 0 {
			t.Errorf("offerings marked %v, want none", got)
		}
	})
}

// TestNodeWithoutAClaimIsReportedAndLeftAlone: a marked Node no NodeClaim
// owns gets a Warning event and nothing is deleted or marked.
func TestNodeWithoutAClaimIsReportedAndLeftAlone(t *testing.T) {
	w := start(t, interruption.Options{})
	claim, _ := w.managed("bystander")
	stranger := w.node("stranger", "aws:///us-east-1a/i-"+w.ID+"stranger")
	notManaged := nodeclaimtest.CounterValue(t, interruption.Actions.WithLabelValues(interruption.ActionNotManaged))

	w.mark(stranger, interruption.Mark{Kind: v1alpha1.InterruptionKindSpotInterruption, EventID: "e-stranger"})
	e := w.event(stranger.Name, interruption.EventNodeNotManaged, 1)[0]
	w.ExpectCounter("actions_total{action=not_managed}",
		interruption.Actions.WithLabelValues(interruption.ActionNotManaged), notManaged, 1)
	w.resync(stranger)
	if e.Type != corev1.EventTypeWarning {
		t.Errorf("NodeNotManaged event type = %s, want Warning", e.Type)
	}
	w.notDeleted(claim)
	if got := w.offerings.marked(); len(got) != 0 {
		t.Errorf("offerings marked %v, want none", got)
	}
	if got := w.events.Find(stranger.Name, interruption.EventNodeNotManaged); len(got) != 1 {
		t.Errorf("%d NodeNotManaged events after a resync, want 1", len(got))
	}
}

// TestMalformedDeadlineIsReportedAndTheNodeStillReplaced: a deadline that is
// not RFC 3339 gets a Warning event naming the annotation; the mark is
// handled as having no deadline.
func TestMalformedDeadlineIsReportedAndTheNodeStillReplaced(t *testing.T) {
	w := start(t, interruption.Options{})
	claim, node := w.managed("malformed")
	count, _ := margins(t)

	w.Update(node, func() {
		node.Annotations = map[string]string{
			v1alpha1.AnnotationInterruptionKind:     v1alpha1.InterruptionKindScheduledChange,
			v1alpha1.AnnotationInterruptionDeadline: "next Tuesday",
			v1alpha1.AnnotationInterruptionEventID:  "e-malformed",
		}
	})
	w.Eventually(settle, w.deleting(claim))
	e := w.event(node.Name, interruption.EventMalformedMark, 1)[0]
	if e.Type != corev1.EventTypeWarning || !strings.Contains(e.Note, v1alpha1.AnnotationInterruptionDeadline) {
		t.Errorf("MalformedInterruptionMark event = %+v, want a Warning naming %s", e, v1alpha1.AnnotationInterruptionDeadline)
	}
	w.event(node.Name, interruption.EventReplacingNode, 1)
	if got, _ := margins(t); got != count {
		t.Errorf("deadline margin got %d samples, want none for a mark without a readable deadline", got-count)
	}
}

// TestUnknownKindIsReportedAndLeftAlone: a kind the controller does not know
// gets a Warning event naming the kind annotation, is counted as unknown,
// and deletes nothing.
func TestUnknownKindIsReportedAndLeftAlone(t *testing.T) {
	w := start(t, interruption.Options{})
	claim, node := w.managed("unknown")
	unknown := nodeclaimtest.CounterValue(t, interruption.Received.WithLabelValues(interruption.KindUnknown))

	w.Update(node, func() { node.Annotations = map[string]string{v1alpha1.AnnotationInterruptionKind: "meteor-strike"} })
	e := w.event(node.Name, interruption.EventMalformedMark, 1)[0]
	if !strings.Contains(e.Note, v1alpha1.AnnotationInterruptionKind) {
		t.Errorf("MalformedInterruptionMark note %q does not name %s", e.Note, v1alpha1.AnnotationInterruptionKind)
	}
	w.ExpectCounter("received_total{kind=unknown}", interruption.Received.WithLabelValues(interruption.KindUnknown), unknown, 1)
	w.resync(node)
	w.notDeleted(claim)
}
