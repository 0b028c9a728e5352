package nodeclaim_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
)

func TestSetConditionStampsTheInjectedTimeOnTransitionsOnly(t *testing.T) {
	claim := &v1alpha1.NodeClaim{}
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	nodeclaim.SetCondition(claim, v1alpha1.ConditionLaunched, metav1.ConditionUnknown, "Waiting", "", t0)
	changed := nodeclaim.SetCondition(claim, v1alpha1.ConditionLaunched, metav1.ConditionUnknown, "InsufficientCapacity", "short", t0.Add(time.Minute))
	c := nodeclaim.Condition(claim, v1alpha1.ConditionLaunched)
	if !changed || c.Reason != "InsufficientCapacity" || !c.LastTransitionTime.Time.Equal(t0) {
		t.Errorf("same status, new reason: changed %v, condition %+v; want the reason updated and the time kept", changed, c)
	}
	nodeclaim.SetCondition(claim, v1alpha1.ConditionLaunched, metav1.ConditionTrue, "Launched", "", t0.Add(2*time.Minute))
	if c := nodeclaim.Condition(claim, v1alpha1.ConditionLaunched); !c.LastTransitionTime.Time.Equal(t0.Add(2 * time.Minute)) {
		t.Errorf("transition time %v, want the injected time of the status change", c.LastTransitionTime)
	}
	if !nodeclaim.IsTrue(claim, v1alpha1.ConditionLaunched) || nodeclaim.IsTrue(claim, v1alpha1.ConditionReady) {
		t.Errorf("IsTrue disagrees with conditions %v", claim.Status.Conditions)
	}
}

func TestConditionReasonKeepsOnlyReasonsTheAPIServerAccepts(t *testing.T) {
	for reason, want := range map[string]string{
		"UnauthorizedOperation":    "UnauthorizedOperation",
		"Client.InvalidParam":      "Unknown",
		"insufficient capacity":    "Unknown",
		"":                         "Unknown",
		"Vcpu_Limit:Exceeded,Spot": "Vcpu_Limit:Exceeded,Spot",
	} {
		if got := nodeclaim.ConditionReason(reason); got != want {
			t.Errorf("ConditionReason(%q) = %q, want %q", reason, got, want)
		}
	}
}

func TestInstanceIDIsTheLastSegmentOfTheProviderID(t *testing.T) {
	for providerID, want := range map[string]string{
		"aws:///us-east-1a/i-0abc": "i-0abc",
		"fake:///us-east-1a/i-1":   "i-1",
		"":                         "",
	} {
		if got := nodeclaim.InstanceID(providerID); got != want {
			t.Errorf("InstanceID(%q) = %q, want %q", providerID, got, want)
		}
	}
}
