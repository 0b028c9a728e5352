package capacitybuffer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	autoscalingv1beta1 "github.com/stowage-dev/stowage/controller/apis/autoscaling/v1beta1"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// Kind is the booking owner kind of a buffer.
const Kind = "CapacityBuffer"

// Reasons of the ReadyForProvisioning condition when it is False.
const (
	ReasonPodTemplateNotFound = "PodTemplateNotFound"
	ReasonScalableRefNotFound = "ScalableRefNotFound"
	ReasonUnsupportedKind     = "UnsupportedScalableRefKind"
	ReasonResolutionFailed    = "ResolutionFailed"
)

// Outcome is what one buffer comes to.
type Outcome struct {
	// Buffer is the buffer as read.
	Buffer *autoscalingv1beta1.CapacityBuffer
	// Ours is false for a buffer of another provisioning strategy, which
	// Stowage leaves alone.
	Ours bool
	// Ready, Reason and Message are the ReadyForProvisioning condition.
	Ready           bool
	Reason, Message string
	// Wanted are the chunks the spec asks for; Replicas those the quotas
	// allow; LimitedBy names the quotas that cut them.
	Wanted, Replicas int32
	LimitedBy        []string
	// Booking is the room to keep: Replicas virtual pods (none when not Ready).
	Booking scheduler.Booking
	res     resolution
}

// OwnerOf names a buffer as a booking owner.
func OwnerOf(cb *autoscalingv1beta1.CapacityBuffer) scheduler.BookingOwner {
	return scheduler.BookingOwner{Kind: Kind, Namespace: cb.Namespace, Name: cb.Name}
}

// Plan works out every buffer, in namespace and name order, the quotas of
// each namespace shared by its buffers in that order (as Cluster Autoscaler
// allocates them). An error is a Source's other than NotFound; the outcomes
// then stand for the buffers read before it.
func Plan(ctx context.Context, src Source, buffers []*autoscalingv1beta1.CapacityBuffer) ([]Outcome, error) {
	buffers = slices.Clone(buffers)
	slices.SortFunc(buffers, func(a, b *autoscalingv1beta1.CapacityBuffer) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	quotas := map[string][]*Quota{}
	out := make([]Outcome, 0, len(buffers))
	for _, cb := range buffers {
		if _, read := quotas[cb.Namespace]; !read {
			rqs, err := src.ResourceQuotas(ctx, cb.Namespace)
			if err != nil {
				return out, fmt.Errorf("listing the resource quotas of namespace %s: %w", cb.Namespace, err)
			}
			quotas[cb.Namespace] = QuotasOf(rqs)
		}
		o, err := plan(ctx, src, cb, quotas[cb.Namespace])
		if err != nil {
			return out, err
		}
		out = append(out, o)
	}
	return out, nil
}

func plan(ctx context.Context, src Source, cb *autoscalingv1beta1.CapacityBuffer, quotas []*Quota) (Outcome, error) {
	o := Outcome{Buffer: cb, Ours: strategy(cb) == autoscalingv1beta1.ActiveCapacity, Booking: scheduler.Booking{Owner: OwnerOf(cb)}}
	if !o.Ours {
		return o, nil
	}
	res, err := resolve(ctx, src, cb)
	switch {
	case err == nil:
	case notFound(err) && cb.Spec.PodTemplateRef != nil:
		o.Reason, o.Message = ReasonPodTemplateNotFound, fmt.Sprintf("PodTemplate %s/%s not found", cb.Namespace, cb.Spec.PodTemplateRef.Name)
		return o, nil
	case notFound(err):
		o.Reason, o.Message = ReasonScalableRefNotFound, fmt.Sprintf("%s %s/%s not found", cb.Spec.ScalableRef.Kind, cb.Namespace, cb.Spec.ScalableRef.Name)
		return o, nil
	case errors.Is(err, errUnsupported):
		o.Reason, o.Message = ReasonUnsupportedKind, err.Error()
		return o, nil
	case cb.Spec.PodTemplateRef == nil && cb.Spec.ScalableRef == nil || cb.Spec.PodTemplateRef != nil && cb.Spec.ScalableRef != nil:
		o.Reason, o.Message = ReasonResolutionFailed, err.Error()
		return o, nil
	default:
		return o, fmt.Errorf("resolving CapacityBuffer %s/%s: %w", cb.Namespace, cb.Name, err)
	}
	o.res, o.Ready = res, true
	o.Reason, o.Message = autoscalingv1beta1.ReasonAttributesSetSuccessfully, "the buffer's chunk shape and replicas are resolved"
	o.Wanted = Replicas(cb.Spec, res.template.Spec, res.workload)
	o.Replicas, o.LimitedBy = Allocate(quotas, res.template.Spec, o.Wanted)
	o.Booking.Pods = scheduler.VirtualPods(o.Booking.Owner, res.template, int(o.Replicas))
	return o, nil
}

// strategy is the buffer's provisioning strategy, the CRD's default when unset.
func strategy(cb *autoscalingv1beta1.CapacityBuffer) string {
	if s := cb.Spec.ProvisioningStrategy; s != nil && *s != "" {
		return *s
	}
	return autoscalingv1beta1.ActiveCapacity
}

// Bookings are the outcomes' bookings with room to keep.
func Bookings(outcomes []Outcome) []scheduler.Booking {
	var out []scheduler.Booking
	for _, o := range outcomes {
		if len(o.Booking.Pods) > 0 {
			out = append(out, o.Booking)
		}
	}
	return out
}
