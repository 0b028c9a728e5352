package lifecycle_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/nodeclaim/lifecycle"
	"github.com/stowage-dev/stowage/controller/nodeclaim/nodeclaimtest"
)

// TestShortageOfEveryAllowedOfferingDeletesTheClaim: when the cloud reports
// short every offering the claim allows, the claim is deleted after that one
// launch attempt, so that the provisioner plans its pods on another type or
// pool, instead of retrying until the launch timeout. (A shortage with
// offerings left keeps the claim: TestInsufficientCapacityRetriesTheSameClaim.)
func TestShortageOfEveryAllowedOfferingDeletesTheClaim(t *testing.T) {
	e := nodeclaimtest.New(t)
	short := e.Cloud.Types[0]
	for i := range short.Offerings {
		short.Offerings[i].Available = false
	}
	startWith(t, e, lifecycle.Options{})
	pool := e.NodePool(nil)
	e.Create(pool)
	claim := e.NodeClaim("short", pool)
	claim.Spec.Requirements = append(claim.Spec.Requirements, v1alpha1.NodeSelectorRequirementWithMinValues{
		Key: corev1.LabelInstanceTypeStable, Operator: v1alpha1.OperatorIn, Values: []string{short.Name}})
	e.Create(claim)

	e.Eventually(settle, deleting(e, claim))
	if got := e.Cloud.Creates(); got != 1 {
		t.Errorf("Create called %d times, want 1: the claim is deleted after its first shortage", got)
	}
	if err := hasCondition(e, claim, v1alpha1.ConditionLaunched, metav1.ConditionUnknown, lifecycle.ReasonAwaitingReconciliation)(); err != nil {
		t.Error(err)
	}
	e.ExpectCounter("launch_failures_total{reason=InsufficientCapacity}",
		lifecycle.LaunchFailures.WithLabelValues(pool.Name, lifecycle.ReasonInsufficientCapacity), 0, 1)
}
