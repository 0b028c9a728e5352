package provisioningrequest

import (
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	provreqv1 "github.com/stowage-dev/stowage/controller/apis/autoscaling/v1"
)

// Reasons Stowage writes; CapacityIsFound, CapacityIsNotFound and
// CapacityIsProvisioned are Cluster Autoscaler's words for the same
// outcomes.
const (
	ReasonAccepted              = "Accepted"
	ReasonPodTemplateNotFound   = "PodTemplateNotFound"
	ReasonCapacityIsFound       = "CapacityIsFound"
	ReasonCapacityIsNotFound    = "CapacityIsNotFound"
	ReasonProvisioning          = "Provisioning"
	ReasonCapacityIsProvisioned = "CapacityIsProvisioned"
	ReasonCapacityShortage      = "CapacityShortage"
	ReasonValidUntilExpired     = "ValidUntilExpired"
	ReasonBookingExpired        = "BookingExpired"
	ReasonCapacityRevoked       = "CapacityRevoked"
)

// DetailNodes is the status detail naming the nodes that hold a Provisioned
// request's room, comma-separated.
const DetailNodes = "nodes"

// Ours reports whether Stowage serves the request's class.
func Ours(pr *provreqv1.ProvisioningRequest) bool {
	c := pr.Spec.ProvisioningClassName
	return c == provreqv1.CheckCapacityClass || c == provreqv1.AtomicScaleUpClass
}

// Done reports whether the request has come to an end that Stowage does not
// leave: Failed, BookingExpired or CapacityRevoked.
func Done(pr *provreqv1.ProvisioningRequest) bool {
	for _, t := range []string{provreqv1.Failed, provreqv1.BookingExpired, provreqv1.CapacityRevoked} {
		if apimeta.IsStatusConditionTrue(pr.Status.Conditions, t) {
			return true
		}
	}
	return false
}

// ProvisionedAt is when the request became Provisioned, and whether it is.
func ProvisionedAt(pr *provreqv1.ProvisioningRequest) (time.Time, bool) {
	c := apimeta.FindStatusCondition(pr.Status.Conditions, provreqv1.Provisioned)
	if c == nil || c.Status != metav1.ConditionTrue {
		return time.Time{}, false
	}
	return c.LastTransitionTime.Time, true
}

// set records a condition on st; the transition time moves only when the
// status does, as metav1 conditions go.
func set(pr *provreqv1.ProvisioningRequest, st *provreqv1.ProvisioningRequestStatus, now time.Time, typ string, status bool, reason, msg string) {
	s := metav1.ConditionFalse
	if status {
		s = metav1.ConditionTrue
	}
	apimeta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: typ, Status: s, Reason: reason, Message: msg,
		ObservedGeneration: pr.Generation, LastTransitionTime: metav1.NewTime(now)})
}

// validUntil is the end of an atomic request's retries, from its
// ValidUntilSeconds parameter; zero when it has none (or not a number).
func validUntil(pr *provreqv1.ProvisioningRequest) time.Time {
	v, ok := pr.Spec.Parameters[provreqv1.ValidUntilSecondsParameter]
	if !ok {
		return time.Time{}
	}
	d, err := time.ParseDuration(string(v) + "s")
	if err != nil || d <= 0 {
		return time.Time{}
	}
	return pr.CreationTimestamp.Add(d)
}
