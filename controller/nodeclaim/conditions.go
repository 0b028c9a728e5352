package nodeclaim

import (
	"regexp"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// SetCondition sets a condition on the claim and reports whether it changed.
// LastTransitionTime comes from now, the injected clock, rather than the wall
// clock that meta.SetStatusCondition would read; it moves only when the status
// does, so an Unknown condition keeps the time it first became Unknown.
func SetCondition(claim *v1alpha1.NodeClaim, condType string, status metav1.ConditionStatus, reason, message string, now time.Time) bool {
	return meta.SetStatusCondition(&claim.Status.Conditions, metav1.Condition{
		Type:               condType,
		Status:             status,
		Reason:             ConditionReason(reason),
		Message:            message,
		ObservedGeneration: claim.Generation,
		LastTransitionTime: metav1.NewTime(now),
	})
}

// IsTrue reports whether the claim's condition is True.
func IsTrue(claim *v1alpha1.NodeClaim, condType string) bool {
	return meta.IsStatusConditionTrue(claim.Status.Conditions, condType)
}

// Condition returns the claim's condition of that type, or nil.
func Condition(claim *v1alpha1.NodeClaim, condType string) *metav1.Condition {
	return meta.FindStatusCondition(claim.Status.Conditions, condType)
}

// reasonPattern is the CRD's pattern for metav1.Condition.Reason.
var reasonPattern = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

// ConditionReason returns reason when the API server would accept it as a
// condition reason, and "Unknown" otherwise (a cloud's reason is not trusted
// to be CamelCase).
func ConditionReason(reason string) string {
	if len(reason) > 1024 || !reasonPattern.MatchString(reason) {
		return "Unknown"
	}
	return reason
}
