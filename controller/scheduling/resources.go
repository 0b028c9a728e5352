package scheduling

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Resources is a resource vector in integer units: CPU in millicores, memory and
// ephemeral storage in bytes, pods as a count, extended resources in their own
// units. It is a value type, cheap to copy and compare, which the solver's hot
// loops need; Extended stays sorted by name.
type Resources struct {
	CPU              int64
	Memory           int64
	EphemeralStorage int64
	Pods             int64
	Extended         []Extended
}

// Extended is one extended resource (nvidia.com/gpu, aws.amazon.com/neuron, hugepages-2Mi, ...).
type Extended struct {
	Name  corev1.ResourceName
	Value int64
}

// FromList converts a Kubernetes resource list.
func FromList(rl corev1.ResourceList) Resources {
	var r Resources
	for name, q := range rl {
		r.Set(name, quantityValue(name, q))
	}
	return r
}

func quantityValue(name corev1.ResourceName, q resource.Quantity) int64 {
	if name == corev1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// Get returns the amount of one resource.
func (r Resources) Get(name corev1.ResourceName) int64 {
	switch name {
	case corev1.ResourceCPU:
		return r.CPU
	case corev1.ResourceMemory:
		return r.Memory
	case corev1.ResourceEphemeralStorage:
		return r.EphemeralStorage
	case corev1.ResourcePods:
		return r.Pods
	}
	if i, ok := r.find(name); ok {
		return r.Extended[i].Value
	}
	return 0
}

// Set sets the amount of one resource.
func (r *Resources) Set(name corev1.ResourceName, v int64) {
	switch name {
	case corev1.ResourceCPU:
		r.CPU = v
	case corev1.ResourceMemory:
		r.Memory = v
	case corev1.ResourceEphemeralStorage:
		r.EphemeralStorage = v
	case corev1.ResourcePods:
		r.Pods = v
	default:
		// Copy on write: Extended may share its array with another vector.
		r.Extended = slices.Clone(r.Extended)
		i, ok := r.find(name)
		if ok {
			r.Extended[i].Value = v
			return
		}
		r.Extended = slices.Insert(r.Extended, i, Extended{Name: name, Value: v})
	}
}

func (r Resources) find(name corev1.ResourceName) (int, bool) {
	return slices.BinarySearchFunc(r.Extended, name, func(e Extended, n corev1.ResourceName) int {
		return strings.Compare(string(e.Name), string(n))
	})
}

// Add returns r + o.
func (r Resources) Add(o Resources) Resources {
	out := Resources{CPU: r.CPU + o.CPU, Memory: r.Memory + o.Memory, EphemeralStorage: r.EphemeralStorage + o.EphemeralStorage, Pods: r.Pods + o.Pods}
	out.Extended = mergeExtended(r.Extended, o.Extended, 1)
	return out
}

// Sub returns r - o.
func (r Resources) Sub(o Resources) Resources {
	out := Resources{CPU: r.CPU - o.CPU, Memory: r.Memory - o.Memory, EphemeralStorage: r.EphemeralStorage - o.EphemeralStorage, Pods: r.Pods - o.Pods}
	out.Extended = mergeExtended(r.Extended, o.Extended, -1)
	return out
}

func mergeExtended(a, b []Extended, sign int64) []Extended {
	if len(b) == 0 {
		return a
	}
	out := make([]Extended, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i].Name < b[j].Name):
			out = append(out, a[i])
			i++
		case i == len(a) || b[j].Name < a[i].Name:
			out = append(out, Extended{Name: b[j].Name, Value: sign * b[j].Value})
			j++
		default:
			out = append(out, Extended{Name: a[i].Name, Value: a[i].Value + sign*b[j].Value})
			i++
			j++
		}
	}
	return out
}

// Max returns the larger of r and o, resource by resource.
func (r Resources) Max(o Resources) Resources {
	out := Resources{CPU: max(r.CPU, o.CPU), Memory: max(r.Memory, o.Memory), EphemeralStorage: max(r.EphemeralStorage, o.EphemeralStorage), Pods: max(r.Pods, o.Pods)}
	out.Extended = slices.Clone(r.Extended)
	for _, e := range o.Extended {
		if e.Value > out.Get(e.Name) {
			out.Set(e.Name, e.Value)
		}
	}
	return out
}

// Fits reports whether r fits within capacity: no resource of r exceeds capacity's.
func (r Resources) Fits(capacity Resources) bool {
	return r.Exceeding(capacity) == ""
}

// Exceeding names the first resource of r that exceeds capacity, or "" when r fits.
func (r Resources) Exceeding(capacity Resources) corev1.ResourceName {
	switch {
	case r.CPU > capacity.CPU:
		return corev1.ResourceCPU
	case r.Memory > capacity.Memory:
		return corev1.ResourceMemory
	case r.Pods > capacity.Pods:
		return corev1.ResourcePods
	case r.EphemeralStorage > capacity.EphemeralStorage:
		return corev1.ResourceEphemeralStorage
	}
	for _, e := range r.Extended {
		if e.Value > 0 && e.Value > capacity.Get(e.Name) {
			return e.Name
		}
	}
	return ""
}

// IsZero reports whether every resource is zero.
func (r Resources) IsZero() bool {
	if r.CPU != 0 || r.Memory != 0 || r.EphemeralStorage != 0 || r.Pods != 0 {
		return false
	}
	for _, e := range r.Extended {
		if e.Value != 0 {
			return false
		}
	}
	return true
}

// List converts r to a Kubernetes resource list, leaving out zero extended resources.
func (r Resources) List() corev1.ResourceList {
	rl := corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(r.CPU, resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(r.Memory, resource.BinarySI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(r.EphemeralStorage, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(r.Pods, resource.DecimalSI),
	}
	for _, e := range r.Extended {
		if e.Value != 0 {
			rl[e.Name] = *resource.NewQuantity(e.Value, resource.DecimalSI)
		}
	}
	return rl
}

// PodRequests is what a pod asks of a node by the kubelet's rule: the larger of the
// sum of its regular containers plus restartable init (sidecar) containers, and the
// peak of each init container run on top of the sidecars started before it; plus
// the pod overhead; plus one pod slot.
func PodRequests(pod *corev1.Pod) Resources {
	var regular Resources
	for i := range pod.Spec.Containers {
		regular = regular.Add(FromList(pod.Spec.Containers[i].Resources.Requests))
	}
	var sidecars, initPeak Resources
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		req := FromList(c.Resources.Requests)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars = sidecars.Add(req)
			initPeak = initPeak.Max(sidecars)
			continue
		}
		initPeak = initPeak.Max(sidecars.Add(req))
	}
	total := regular.Add(sidecars).Max(initPeak)
	if pod.Spec.Overhead != nil {
		total = total.Add(FromList(pod.Spec.Overhead))
	}
	total.Pods = 1
	return total
}
