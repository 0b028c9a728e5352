package catalogue

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// The EKS node formulas (docs/guides/capacity.md explains each):
//   - memory capacity is the instance memory less VMMemoryOverheadPercent (rounded up to a MiB), which the hypervisor and firmware keep;
//   - kube-reserved CPU is 6% of the first core, 1% of the second, 0.5% of the third and fourth, 0.25% of the rest;
//   - kube-reserved memory is 11 MiB per pod plus 255 MiB;
//   - kube-reserved ephemeral storage is 1 GiB; system-reserved is nothing unless the NodeClass sets it;
//   - the hard eviction thresholds are memory.available<100Mi and nodefs.available<10%; a soft threshold
//     the NodeClass sets counts where it is larger;
//   - ephemeral storage is the root volume, or with instanceStorePolicy RAID0 the instance store (decimal GB);
//   - max pods is the ENI formula max_enis * (ipv4_per_eni - 1) + 2, unless the NodeClass sets maxPods or podsPerCore.
const (
	VMMemoryOverheadPercent    = 0.075
	kubeReservedMemoryPerPodMi = 11
	kubeReservedMemoryBaseMi   = 255
	DefaultRootVolumeGiB       = 20
	mi                         = int64(1) << 20
	gi                         = int64(1) << 30
)

// DefaultEvictionHard are the kubelet's hard eviction thresholds on EKS AMIs.
var DefaultEvictionHard = map[string]string{"memory.available": "100Mi", "nodefs.available": "10%"}

// MaxPods is the node's pod limit: the ENI formula, or the kubelet's maxPods, capped by podsPerCore.
func MaxPods(info Info, kubelet *v1alpha1.KubeletConfiguration) int64 {
	pods := info.MaxPodsENI
	if kubelet == nil {
		return pods
	}
	if kubelet.MaxPods != nil {
		pods = int64(*kubelet.MaxPods)
	}
	if kubelet.PodsPerCore != nil && *kubelet.PodsPerCore > 0 {
		pods = min(pods, int64(*kubelet.PodsPerCore)*info.VCPU)
	}
	return pods
}

// Capacity is what a node of this type reports as capacity.
func Capacity(info Info, kubelet *v1alpha1.KubeletConfiguration, rootVolumeGiB int64) scheduling.Resources {
	r := scheduling.Resources{
		CPU:              info.VCPU * 1000,
		Memory:           (info.MemoryMiB - vmMemoryOverheadMiB(info.MemoryMiB)) * mi,
		EphemeralStorage: rootVolumeGiB * gi,
		Pods:             MaxPods(info, kubelet),
	}
	if info.GPUCount > 0 && info.GPUManufacturer == "nvidia" {
		r.Set("nvidia.com/gpu", info.GPUCount)
	}
	if info.AcceleratorCount > 0 {
		r.Set("aws.amazon.com/neuron", info.AcceleratorCount)
	}
	return r
}

// vmMemoryOverheadMiB is VMMemoryOverheadPercent of the memory, rounded up to a
// whole MiB as Karpenter does (m6i.large: 614.4 -> 615 MiB). It works in integers
// so that no product lands a hair above a whole number and rounds up once more.
func vmMemoryOverheadMiB(memoryMiB int64) int64 {
	const perMille = int64(VMMemoryOverheadPercent * 1000)
	return (memoryMiB*perMille + 999) / 1000
}

// KubeReservedCPU is the EKS kube-reserved CPU in millicores for a vCPU count.
func KubeReservedCPU(vcpu int64) int64 {
	// Tiers of (cores, thousandths of a core reserved per core, in units of 1/4 millicore).
	tiers := []struct{ cores, quarterMillis int64 }{{1, 240}, {1, 40}, {2, 20}, {1 << 30, 10}}
	var quarter, left = int64(0), vcpu
	for _, t := range tiers {
		n := min(left, t.cores)
		quarter += n * t.quarterMillis
		left -= n
	}
	return quarter / 4
}

// InstanceStoreBytes is the size of a type's instance store in RAID 0: EC2's
// TotalSizeInGB, in decimal gigabytes as EC2 counts them.
func InstanceStoreBytes(info Info) int64 {
	return info.LocalNVMeGiB * 1_000_000_000
}

// ComputeOverhead is the EKS reservation for a node of this type, with the NodeClass's overrides.
func ComputeOverhead(info Info, capacity scheduling.Resources, kubelet *v1alpha1.KubeletConfiguration) cloudprovider.Overhead {
	kube := scheduling.Resources{
		CPU:              KubeReservedCPU(info.VCPU),
		Memory:           (kubeReservedMemoryPerPodMi*capacity.Pods + kubeReservedMemoryBaseMi) * mi,
		EphemeralStorage: gi,
	}
	var system, soft scheduling.Resources
	eviction := DefaultEvictionHard
	if kubelet != nil {
		kube = override(kube, kubelet.KubeReserved)
		system = override(system, kubelet.SystemReserved)
		if len(kubelet.EvictionHard) > 0 {
			eviction = kubelet.EvictionHard
		}
		soft = evictionThreshold(capacity, kubelet.EvictionSoft)
	}
	hard := evictionThreshold(capacity, eviction)
	threshold := scheduling.Resources{Memory: max(hard.Memory, soft.Memory), EphemeralStorage: max(hard.EphemeralStorage, soft.EphemeralStorage)}
	return cloudprovider.Overhead{KubeReserved: kube, SystemReserved: system, EvictionThreshold: threshold}
}

func override(r scheduling.Resources, values map[string]string) scheduling.Resources {
	for name, v := range values {
		q, err := resource.ParseQuantity(v)
		if err != nil || name == "pid" {
			continue // validation reports bad values; pid is not a schedulable resource
		}
		if name == string(corev1.ResourceCPU) {
			r.CPU = q.MilliValue()
			continue
		}
		r.Set(corev1.ResourceName(name), q.Value())
	}
	return r
}

func evictionThreshold(capacity scheduling.Resources, thresholds map[string]string) scheduling.Resources {
	var r scheduling.Resources
	r.Memory = thresholdValue(thresholds["memory.available"], capacity.Memory)
	r.EphemeralStorage = thresholdValue(thresholds["nodefs.available"], capacity.EphemeralStorage)
	return r
}

func thresholdValue(v string, total int64) int64 {
	if v == "" {
		return 0
	}
	if pct, ok := strings.CutSuffix(v, "%"); ok {
		f, err := strconv.ParseFloat(pct, 64)
		if err != nil {
			return 0
		}
		return int64(float64(total) * f / 100)
	}
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return 0
	}
	return q.Value()
}
