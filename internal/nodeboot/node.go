package nodeboot

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// VMMemoryOverheadPerMille is the share of an instance type's nominal
// memory (EC2's MemoryInfo.SizeInMiB) a node does not see, in thousandths:
// the hypervisor and firmware keep it, and the real figure differs by type
// and is published nowhere (nodeadm has no capacity rule). 75, Karpenter's
// default VM_MEMORY_OVERHEAD_PERCENT of 7.5 %, is the assumption both
// make; the overhead is rounded up to a whole MiB.
const VMMemoryOverheadPerMille = 75

// Facts are an instance's EC2 facts a node's capacity comes from.
type Facts struct {
	VCPU      int64
	MemoryMiB int64
	// NvidiaGPUs and Neuron are the devices their device plugins advertise
	// (nvidia.com/gpu, aws.amazon.com/neuron).
	NvidiaGPUs, Neuron int64
	// EphemeralBytes is the size of the volume holding the kubelet's state:
	// the root volume (AL2023) or data volume (Bottlerocket), or the instance
	// store in RAID 0.
	EphemeralBytes int64
}

// Capacity is what the kubelet reports as the node's capacity: the vCPUs,
// the memory less VMMemoryOverheadPerMille, the ephemeral volume, the
// devices, and max pods, capped by podsPerCore × vCPUs when that is set.
func (k *Kubelet) Capacity(f Facts) corev1.ResourceList {
	overheadMiB := (f.MemoryMiB*VMMemoryOverheadPerMille + 999) / 1000
	pods := int64(k.Config.MaxPods)
	if ppc := int64(k.Config.PodsPerCore); ppc > 0 {
		pods = min(pods, ppc*f.VCPU)
	}
	out := corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(f.VCPU*1000, resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity((f.MemoryMiB-overheadMiB)<<20, resource.BinarySI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(f.EphemeralBytes, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(pods, resource.DecimalSI),
	}
	if f.NvidiaGPUs > 0 {
		out["nvidia.com/gpu"] = *resource.NewQuantity(f.NvidiaGPUs, resource.DecimalSI)
	}
	if f.Neuron > 0 {
		out["aws.amazon.com/neuron"] = *resource.NewQuantity(f.Neuron, resource.DecimalSI)
	}
	return out
}

// Allocatable is the kubelet's node allocatable: each resource's capacity
// less its system-reserved, its kube-reserved and its hard eviction
// threshold (memory.available for memory, nodefs.available for ephemeral
// storage; a percentage of the capacity, as a float32 as the kubelet parses
// it), never below zero. Soft thresholds do not count.
func (k *Kubelet) Allocatable(capacity corev1.ResourceList) (corev1.ResourceList, error) {
	eviction := map[corev1.ResourceName]string{corev1.ResourceMemory: k.Config.EvictionHard["memory.available"],
		corev1.ResourceEphemeralStorage: k.Config.EvictionHard["nodefs.available"]}
	out := corev1.ResourceList{}
	for name, c := range capacity {
		q := c.DeepCopy()
		for _, reserved := range []map[string]string{k.Config.SystemReserved, k.Config.KubeReserved} {
			if v, ok := reserved[string(name)]; ok {
				r, err := resource.ParseQuantity(v)
				if err != nil {
					return nil, fmt.Errorf("reserved %s %q: %w", name, v, err)
				}
				q.Sub(r)
			}
		}
		if v := eviction[name]; v != "" {
			t, err := thresholdQuantity(v, c)
			if err != nil {
				return nil, fmt.Errorf("evictionHard for %s %q: %w", name, v, err)
			}
			q.Sub(t)
		}
		if q.Sign() < 0 {
			q = *resource.NewQuantity(0, q.Format)
		}
		out[name] = q
	}
	return out, nil
}

// thresholdQuantity is the kubelet's GetThresholdQuantity: a quantity, or a
// percentage (parsed as a float32, as the kubelet does) of the capacity.
func thresholdQuantity(v string, capacity resource.Quantity) (resource.Quantity, error) {
	if pct, ok := strings.CutSuffix(v, "%"); ok {
		f, err := strconv.ParseFloat(pct, 32)
		if err != nil {
			return resource.Quantity{}, err
		}
		share := float32(f) / 100
		return *resource.NewQuantity(int64(float64(capacity.Value())*float64(share)), resource.BinarySI), nil
	}
	return resource.ParseQuantity(v)
}
