package checker

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stowage-dev/stowage/controller/scheduling"
)

// res is a resource vector in milli-units of every resource (CPU millicores,
// memory milli-bytes, pods milli-pods), so one arithmetic covers every resource.
type res map[corev1.ResourceName]int64

// fromList converts a Kubernetes resource list.
func fromList(rl corev1.ResourceList) res {
	out := make(res, len(rl))
	for name, q := range rl {
		out[name] = q.MilliValue()
	}
	return out
}

// fromResources converts the scheduling vocabulary's vector (instance types use it).
func fromResources(r scheduling.Resources) res {
	return fromList(r.List())
}

// add adds o into r.
func (r res) add(o res) {
	for name, v := range o {
		r[name] += v
	}
}

// maxWith raises every resource of r to at least o's.
func (r res) maxWith(o res) {
	for name, v := range o {
		if v > r[name] {
			r[name] = v
		}
	}
}

func (r res) clone() res {
	out := make(res, len(r))
	out.add(r)
	return out
}

// exceeding returns the first resource (in name order) where need > allocatable.
func exceeding(need, allocatable res) (corev1.ResourceName, bool) {
	names := make([]corev1.ResourceName, 0, len(need))
	for name, v := range need {
		if v > 0 && v > allocatable[name] {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return "", false
	}
	slices.SortFunc(names, func(a, b corev1.ResourceName) int { return strings.Compare(string(a), string(b)) })
	return names[0], true
}

// quantity renders one resource amount for messages.
func quantity(name corev1.ResourceName, milli int64) string {
	if name == corev1.ResourceCPU {
		return resource.NewMilliQuantity(milli, resource.DecimalSI).String()
	}
	if name == corev1.ResourceMemory || name == corev1.ResourceEphemeralStorage {
		return resource.NewQuantity(milli/1000, resource.BinarySI).String()
	}
	return resource.NewMilliQuantity(milli, resource.DecimalSI).String()
}

// podRequests is the kubelet's rule, written independently of the solver's: the
// larger of (regular containers + restartable init containers) and the peak of
// each init container run on top of the sidecars started before it; plus the pod
// overhead; plus one pod.
func podRequests(pod *corev1.Pod) res {
	regular := res{}
	for i := range pod.Spec.Containers {
		regular.add(fromList(pod.Spec.Containers[i].Resources.Requests))
	}
	sidecars, peak := res{}, res{}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		req := fromList(c.Resources.Requests)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars.add(req)
			peak.maxWith(sidecars)
			continue
		}
		running := sidecars.clone()
		running.add(req)
		peak.maxWith(running)
	}
	total := regular
	total.add(sidecars)
	total.maxWith(peak)
	if pod.Spec.Overhead != nil {
		total.add(fromList(pod.Spec.Overhead))
	}
	total[corev1.ResourcePods] = 1000
	return total
}
