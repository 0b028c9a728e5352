package capacitybuffer

import (
	"fmt"
	"math"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	autoscalingv1beta1 "github.com/stowage-dev/stowage/controller/apis/autoscaling/v1beta1"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// Replicas is how many chunks a buffer keeps, as Cluster Autoscaler reads
// the spec: replicas and the percentage of the workload's replicas (rounded
// up, at least one) give the larger of the two; limits cap it at the chunks
// whose requests fit in them; with neither replicas nor percentage, as many
// chunks as fit in the limits; with nothing, none. workload is the
// scalableRef's current replicas, -1 for a podTemplateRef buffer.
func Replicas(spec autoscalingv1beta1.CapacityBufferSpec, chunk corev1.PodSpec, workload int32) int32 {
	var candidates []int32
	if spec.Replicas != nil {
		candidates = append(candidates, *spec.Replicas)
	}
	if spec.Percentage != nil && workload > 0 {
		candidates = append(candidates, percentOf(workload, *spec.Percentage))
	}
	fit, limited := fitInLimits(spec.Limits, chunk)
	switch {
	case len(candidates) == 0 && limited:
		return fit
	case len(candidates) == 0:
		return 0
	case limited:
		return min(slices.Max(candidates), fit)
	}
	return slices.Max(candidates)
}

// percentOf is ceil(n * percent / 100), at least one when both are positive.
func percentOf(n, percent int32) int32 {
	if percent <= 0 {
		return 0
	}
	return max(int32(math.Ceil(float64(n)*float64(percent)/100)), 1)
}

// fitInLimits is how many chunks' requests fit in the limits, over the
// resources both name; limited is false when they name none in common.
func fitInLimits(limits corev1.ResourceList, chunk corev1.PodSpec) (int32, bool) {
	requests := scheduling.PodRequests(&corev1.Pod{Spec: chunk})
	fit, limited := int64(math.MaxInt32), false
	for name, q := range limits {
		per := requests.Get(name)
		if per <= 0 {
			continue
		}
		limit := q.Value()
		if name == corev1.ResourceCPU {
			limit = q.MilliValue()
		}
		fit, limited = min(fit, limit/per), true
	}
	return int32(max(fit, 0)), limited //nolint:gosec // at most MaxInt32
}

// Quota is what one ResourceQuota of the namespace leaves: its hard limits
// less what the namespace uses (its status) less what earlier buffers took.
type Quota struct {
	Name string
	Left corev1.ResourceList
}

// QuotasOf reads the namespace's ResourceQuotas that apply to every pod
// (those with scopes or a scope selector apply to some pods only and are
// left out), each with what it leaves.
func QuotasOf(quotas []corev1.ResourceQuota) []*Quota {
	var out []*Quota
	for _, rq := range quotas {
		if len(rq.Spec.Scopes) > 0 || rq.Spec.ScopeSelector != nil {
			continue
		}
		left := corev1.ResourceList{}
		for name, hard := range rq.Spec.Hard {
			q := hard.DeepCopy()
			if used, ok := rq.Status.Used[name]; ok {
				q.Sub(used)
			}
			left[name] = q
		}
		out = append(out, &Quota{Name: rq.Name, Left: left})
	}
	slices.SortFunc(out, func(a, b *Quota) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// charges are what one chunk counts against a quota, by quota resource
// name: one pod (pods, count/pods) and its requests (cpu and requests.cpu,
// and so on; requests.<name> for an extended resource).
func charges(chunk corev1.PodSpec) map[corev1.ResourceName]int64 {
	out := map[corev1.ResourceName]int64{corev1.ResourcePods: 1000, "count/pods": 1000}
	for name, q := range scheduling.PodRequests(&corev1.Pod{Spec: chunk}).List() {
		if q.IsZero() || name == corev1.ResourcePods {
			continue
		}
		out["requests."+name] = q.MilliValue()
		if name == corev1.ResourceCPU || name == corev1.ResourceMemory || name == corev1.ResourceEphemeralStorage {
			out[name] = q.MilliValue()
		}
	}
	return out
}

// Allocate takes want chunks (at most) out of the quotas, as Cluster
// Autoscaler's quota allocator does for the buffers of a namespace in turn:
// it returns how many the quotas allow and, when fewer than want, the
// quotas (and resources) that limit them.
func Allocate(quotas []*Quota, chunk corev1.PodSpec, want int32) (int32, []string) {
	per := charges(chunk)
	allowed, fits := want, map[string]int32{} // "quota (resource)" -> chunks it allows
	for _, q := range quotas {
		for key, milli := range per {
			if left, ok := q.Left[key]; ok {
				n := int32(min(max(left.MilliValue()/milli, 0), int64(want))) //nolint:gosec // at most want
				fits[fmt.Sprintf("%s (%s)", q.Name, key)], allowed = n, min(allowed, n)
			}
		}
	}
	var blocking []string
	for name, n := range fits {
		if n == allowed && allowed < want {
			blocking = append(blocking, name)
		}
	}
	for _, q := range quotas {
		for key, milli := range per {
			if left, ok := q.Left[key]; ok {
				left.Sub(*resource.NewMilliQuantity(milli*int64(allowed), left.Format))
				q.Left[key] = left
			}
		}
	}
	slices.Sort(blocking)
	return allowed, blocking
}
