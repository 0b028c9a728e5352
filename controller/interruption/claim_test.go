package interruption_test

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/interruption"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
)

// TestAClaimMarkedBeforeItsNodeRegisteredIsReplaced: a spot instance
// interrupted while it boots has no Node, so the Lambda marks its NodeClaim;
// the claim is deleted at once (its Interrupted condition recording the
// mark), its offering is marked from the claim's labels, and a resync or the
// same mark again acts no more.
func TestAClaimMarkedBeforeItsNodeRegisteredIsReplaced(t *testing.T) {
	w := start(t, interruption.Options{})
	claim := w.NodeClaim("booting", nil)
	claim.Finalizers = []string{holdFinalizer}
	claim.Labels = map[string]string{corev1.LabelInstanceTypeStable: "c7g.xlarge", corev1.LabelTopologyZone: "us-east-1b",
		v1alpha1.LabelCapacityType: v1alpha1.CapacityTypeSpot}
	w.Create(claim)
	w.UpdateStatus(claim, func() { claim.Status.ProviderID = "aws:///us-east-1b/i-" + w.ID + "booting" })
	mark := interruption.Mark{Kind: v1alpha1.InterruptionKindSpotInterruption, EventID: "e-boot",
		Deadline: w.Clock.Now().Add(2 * time.Minute).Truncate(time.Second)}

	w.Update(claim, func() {
		if !interruption.MarkClaim(claim, mark) {
			t.Error("marking an unmarked claim changed nothing")
		}
	})
	w.Eventually(settle, w.deleting(claim))
	w.event(claim.Name, interruption.EventInterruptionReceived, 1)
	if e := w.event(claim.Name, interruption.EventReplacingNode, 1)[0]; e.Type != corev1.EventTypeNormal {
		t.Errorf("ReplacingNode event = %+v, want a Normal one about the claim", e)
	}
	cond := nodeclaim.Condition(claim, v1alpha1.ConditionInterrupted)
	if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != "SpotInterruption" {
		t.Errorf("claim Interrupted condition = %+v, want True/SpotInterruption", cond)
	}
	want := []offeringCall{{"c7g.xlarge", "us-east-1b", v1alpha1.CapacityTypeSpot, interruption.ReasonSpotInterruption}}
	if got := w.offerings.marked(); !slices.Equal(got, want) {
		t.Errorf("offerings marked %v, want %v", got, want)
	}
	if _, err := w.ctrl.ClaimReconciler().Reconcile(w.Ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(claim)}); err != nil {
		t.Fatal(err)
	}
	if n := w.kube.deletes.Load(); n != 1 || len(w.offerings.marked()) != 1 {
		t.Errorf("after a resync: %d claim deletes and %d offering marks, want 1 and 1", n, len(w.offerings.marked()))
	}
}

// TestOnlyMarkedClaimsAreReplaced: a claim with a deadline annotation but no
// kind is not marked, and is left alone while a marked one beside it goes.
func TestOnlyMarkedClaimsAreReplaced(t *testing.T) {
	w := start(t, interruption.Options{})
	plain := w.NodeClaim("plain", nil)
	plain.Annotations = map[string]string{v1alpha1.AnnotationInterruptionDeadline: w.Clock.Now().UTC().Format(time.RFC3339)}
	w.Create(plain)
	marked := w.NodeClaim("marked", nil)
	marked.Finalizers = []string{holdFinalizer}
	interruption.MarkClaim(marked, interruption.Mark{Kind: v1alpha1.InterruptionKindInstanceStopping, EventID: "e-stop"})
	w.Create(marked)

	w.Eventually(settle, w.deleting(marked))
	if err := w.Get(plain); err != nil || !plain.DeletionTimestamp.IsZero() {
		t.Errorf("claim %s without a kind: %v, deleting %v; want it left alone", plain.Name, err, !plain.DeletionTimestamp.IsZero())
	}
	if n := w.kube.deletes.Load(); n != 1 {
		t.Errorf("the controller deleted %d claims, want 1", n)
	}
}
