package catalogue

import (
	"maps"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// The EKS node formulas, as nodeadm (AL2023, and custom images built on it)
// and Bottlerocket apply them and the kubelet reports them
// (docs/guides/capacity.md explains each; internal/nodeboot's independent
// reading of the user data checks them on the bed and in the simulator):
//   - memory capacity is the instance memory less VMMemoryOverheadPercent (rounded up to a MiB), which the hypervisor and firmware keep;
//   - kube-reserved CPU is 6% of the first core, 1% of the second, 0.5% of the third and fourth, 0.25% of the rest;
//   - kube-reserved memory is 11 MiB per pod plus 255 MiB: the pods of nodeadm's own max pods (the ENI formula,
//     whatever maxPods or podsPerCore the kubelet then runs with), or on Bottlerocket of its max-pods setting;
//   - kube-reserved ephemeral storage is 1 GiB; system-reserved is nothing unless the NodeClass sets it;
//   - the hard eviction thresholds are memory.available<100Mi, nodefs.available<10% and nodefs.inodesFree<5%;
//     nodeadm merges the NodeClass's evictionHard into them key by key, Bottlerocket takes the NodeClass's
//     alone; a percentage is of the capacity, parsed as a float32 as the kubelet does; soft thresholds do not
//     count, as the kubelet does not subtract them;
//   - ephemeral storage is the root volume, or with instanceStorePolicy RAID0 the instance store (decimal GB);
//   - max pods is the ENI formula max_enis * (ipv4_per_eni - 1) + 2, unless the NodeClass sets maxPods, capped
//     by podsPerCore * vCPUs (which Bottlerocket has no setting for).
const (
	VMMemoryOverheadPercent    = 0.075
	kubeReservedMemoryPerPodMi = 11
	kubeReservedMemoryBaseMi   = 255
	DefaultRootVolumeGiB       = 20
	mi                         = int64(1) << 20
	gi                         = int64(1) << 30
)

// DefaultEvictionHard are the kubelet's hard eviction thresholds on EKS AMIs.
var DefaultEvictionHard = map[string]string{"memory.available": "100Mi", "nodefs.available": "10%", "nodefs.inodesFree": "5%"}

// MaxPods is the node's pod limit: the ENI formula, or the kubelet's
// maxPods, capped by podsPerCore but on Bottlerocket.
func MaxPods(info Info, opts Options) int64 {
	pods := maxPodsSetting(info, opts)
	if k := opts.Kubelet; k != nil && k.PodsPerCore != nil && *k.PodsPerCore > 0 && !opts.Bottlerocket {
		pods = min(pods, int64(*k.PodsPerCore)*info.VCPU)
	}
	return pods
}

// maxPodsSetting is the max pods the NodeClass sets, else the ENI formula.
func maxPodsSetting(info Info, opts Options) int64 {
	if k := opts.Kubelet; k != nil && k.MaxPods != nil {
		return int64(*k.MaxPods)
	}
	return info.MaxPodsENI
}

// Capacity is what a node of this type reports as capacity: ephemeral
// storage on the instance store with RAID0 where the type has one, else on
// the root volume (DefaultRootVolumeGiB unless opts say).
func Capacity(info Info, opts Options) scheduling.Resources {
	rootGiB := opts.RootVolumeGiB
	if rootGiB == 0 {
		rootGiB = DefaultRootVolumeGiB
	}
	r := scheduling.Resources{
		CPU:              info.VCPU * 1000,
		Memory:           (info.MemoryMiB - vmMemoryOverheadMiB(info.MemoryMiB)) * mi,
		EphemeralStorage: rootGiB * gi,
		Pods:             MaxPods(info, opts),
	}
	if opts.InstanceStoreRAID0 && info.LocalNVMeGiB > 0 {
		r.EphemeralStorage = InstanceStoreBytes(info)
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
func ComputeOverhead(info Info, capacity scheduling.Resources, opts Options) cloudprovider.Overhead {
	reservedPods := info.MaxPodsENI // nodeadm's base max pods
	if opts.Bottlerocket {
		reservedPods = maxPodsSetting(info, opts)
	}
	kube := scheduling.Resources{
		CPU:              KubeReservedCPU(info.VCPU),
		Memory:           (kubeReservedMemoryPerPodMi*reservedPods + kubeReservedMemoryBaseMi) * mi,
		EphemeralStorage: gi,
	}
	var system scheduling.Resources
	eviction := DefaultEvictionHard
	if k := opts.Kubelet; k != nil {
		kube = override(kube, k.KubeReserved)
		system = override(system, k.SystemReserved)
		eviction = evictionHard(k.EvictionHard, opts.Bottlerocket)
	}
	return cloudprovider.Overhead{KubeReserved: kube, SystemReserved: system, EvictionThreshold: evictionThreshold(capacity, eviction)}
}

// evictionHard is the kubelet's hard thresholds: the NodeClass's laid over
// nodeadm's defaults key by key (its drop-in is a JSON merge patch of the
// base configuration), or on Bottlerocket the NodeClass's alone.
func evictionHard(set map[string]string, bottlerocket bool) map[string]string {
	if len(set) == 0 {
		return DefaultEvictionHard
	}
	if bottlerocket {
		return set
	}
	out := maps.Clone(DefaultEvictionHard)
	maps.Copy(out, set)
	return out
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

// thresholdValue is a threshold's quantity: a percentage of total is parsed
// as a float32, as the kubelet parses it (10 % of 20 GiB is 32 bytes over a
// tenth).
func thresholdValue(v string, total int64) int64 {
	if v == "" {
		return 0
	}
	if pct, ok := strings.CutSuffix(v, "%"); ok {
		f, err := strconv.ParseFloat(pct, 32)
		if err != nil {
			return 0
		}
		return int64(float64(total) * float64(float32(f)/100))
	}
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return 0
	}
	return q.Value()
}
