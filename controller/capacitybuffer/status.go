package capacitybuffer

import (
	"fmt"
	"strings"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	autoscalingv1beta1 "github.com/stowage-dev/stowage/controller/apis/autoscaling/v1beta1"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// Reasons of the Provisioning condition.
const (
	ReasonNotReady       = "NotReadyForProvisioning"
	ReasonBufferEmpty    = "BufferEmpty"
	ReasonProvisioned    = "Provisioned"
	ReasonScalingUp      = "CapacityRequested"
	ReasonCannotFit      = "CannotBeProvisioned"
	conditionMessageSize = 1024
)

// Status is the buffer's status for its outcome and the provisioner's last
// word on its booking (nil while no decision has seen it), at now: the
// conditions keep their transition times while their status holds.
func Status(o Outcome, seen *scheduler.BookingResult, now metav1.Time) autoscalingv1beta1.CapacityBufferStatus {
	cb := o.Buffer
	st := autoscalingv1beta1.CapacityBufferStatus{Conditions: append([]metav1.Condition(nil), cb.Status.Conditions...)}
	strategy := strategy(cb)
	st.ProvisioningStrategy = &strategy
	set := func(typ string, ok bool, reason, msg string) {
		status := metav1.ConditionFalse
		if ok {
			status = metav1.ConditionTrue
		}
		apimeta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason,
			Message: cut(msg), ObservedGeneration: cb.Generation, LastTransitionTime: now})
	}
	set(autoscalingv1beta1.ConditionReadyForProvisioning, o.Ready, o.Reason, o.Message)
	if !o.Ready {
		set(autoscalingv1beta1.ConditionProvisioning, false, ReasonNotReady, "the buffer is not ready for provisioning: "+o.Message)
		return st
	}
	st.Replicas = &o.Replicas
	if o.res.podTemplate != "" {
		st.PodTemplateRef, st.PodTemplateGeneration = &autoscalingv1beta1.LocalObjectRef{Name: o.res.podTemplate}, &o.res.generation
	}
	if len(o.LimitedBy) > 0 {
		set(autoscalingv1beta1.ConditionLimitedByQuotas, true, autoscalingv1beta1.ReasonResourceQuotasAllocated,
			fmt.Sprintf("%d of the %d chunks asked for fit the namespace's resource quotas; limited by %s", o.Replicas, o.Wanted, strings.Join(o.LimitedBy, ", ")))
	} else {
		set(autoscalingv1beta1.ConditionLimitedByQuotas, false, autoscalingv1beta1.ReasonResourceQuotasAllocated,
			fmt.Sprintf("the namespace's resource quotas allow all %d chunks", o.Wanted))
	}
	if reason, ok, msg := provisioning(o.Replicas, seen); reason != "" {
		set(autoscalingv1beta1.ConditionProvisioning, ok, reason, msg)
	}
	return st
}

// provisioning is the Provisioning condition for the provisioner's last word
// on the booking; no reason leaves it as it is.
func provisioning(replicas int32, seen *scheduler.BookingResult) (reason string, ok bool, msg string) {
	switch {
	case replicas == 0:
		return ReasonBufferEmpty, false, "the buffer keeps no chunk"
	case seen == nil:
		return "", false, ""
	case seen.Unschedulable > 0:
		return ReasonCannotFit, false, fmt.Sprintf("%d of %d chunks fit no pool: %s", seen.Unschedulable, replicas, seen.Reason)
	case seen.New > 0:
		return ReasonScalingUp, true, fmt.Sprintf("launching capacity for %d chunks; %d fit existing capacity", seen.New, seen.Existing)
	}
	return ReasonProvisioned, true, fmt.Sprintf("all %d chunks fit existing capacity", seen.Existing)
}

func cut(s string) string {
	if len(s) <= conditionMessageSize {
		return s
	}
	return s[:conditionMessageSize-3] + "..."
}
