package simulate

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/state"
)

// TestAPodStatusWriteHoldsForTheWritesAfterIt: kube-scheduler's status
// writes reach the fake client's tracker only when a later write needs it;
// that write must still see them, as the API server would: the new version
// is current, the one before it stale, and the status is kept.
func TestAPodStatusWriteHoldsForTheWritesAfterIt(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	k, err := newKube(state.NewCluster(clk), clk)
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "web:1"}}}}
	if err := k.Create(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	stale := pod.DeepCopy()
	marked := corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: "0/0 nodes are available"}}}
	stored, err := k.writePodStatus(client.ObjectKeyFromObject(pod), pod.ResourceVersion, marked)
	if err != nil {
		t.Fatal(err)
	}
	stale.Labels = map[string]string{"app": "web"}
	if err := k.Update(t.Context(), stale); !apierrors.IsConflict(err) {
		t.Fatalf("an update at the version before the status write: %v, want a conflict", err)
	}
	labelled := stored.DeepCopy()
	labelled.Labels = map[string]string{"app": "web"}
	if err := k.Update(t.Context(), labelled); err != nil {
		t.Fatalf("an update at the version the status write stored: %v", err)
	}
	got, err := k.stored(pod)
	if err != nil {
		t.Fatal(err)
	}
	if p := got.(*corev1.Pod); p.Labels["app"] != "web" || len(p.Status.Conditions) != 1 ||
		p.Status.Conditions[0].Reason != corev1.PodReasonUnschedulable {
		t.Fatalf("stored pod: labels %v, conditions %+v; want the label and the Unschedulable condition", p.Labels, p.Status.Conditions)
	}
	if err := k.Delete(t.Context(), labelled); err != nil {
		t.Fatal(err)
	}
	if _, err := k.stored(pod); !apierrors.IsNotFound(err) {
		t.Fatalf("after the delete, the tracker: %v, want not found", err)
	}
}
