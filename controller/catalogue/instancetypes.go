package catalogue

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// Options shape the instance types built from facts.
type Options struct {
	Region string
	Zones  []string
	// CapacityTypes offered in every zone; spot and on-demand when empty.
	CapacityTypes []string
	Kubelet       *v1alpha1.KubeletConfiguration
	// RootVolumeGiB sizes ephemeral storage; DefaultRootVolumeGiB when zero.
	RootVolumeGiB int64
	// InstanceStoreRAID0 (a NodeClass's instanceStorePolicy RAID0) puts
	// ephemeral storage on the instance store of the types that have one.
	InstanceStoreRAID0 bool
	// Bottlerocket says the nodes boot Bottlerocket, whose settings turn the
	// kubelet settings into allocatable otherwise than nodeadm does.
	Bottlerocket bool
}

// DefaultOptions are us-east-1 with three zones, spot and on-demand.
func DefaultOptions() Options {
	return Options{Region: "us-east-1", Zones: []string{"us-east-1a", "us-east-1b", "us-east-1c"}}
}

// InstanceTypes builds schedulable instance types from facts, one offering per
// zone and capacity type, every offering available.
func InstanceTypes(infos []Info, opts Options) []*cloudprovider.InstanceType {
	if len(opts.CapacityTypes) == 0 {
		opts.CapacityTypes = []string{v1alpha1.CapacityTypeSpot, v1alpha1.CapacityTypeOnDemand}
	}
	if opts.RootVolumeGiB == 0 {
		opts.RootVolumeGiB = DefaultRootVolumeGiB
	}
	out := make([]*cloudprovider.InstanceType, 0, len(infos))
	for _, info := range infos {
		out = append(out, NewInstanceType(info, opts, offerings(info, opts)))
	}
	return out
}

func offerings(info Info, opts Options) cloudprovider.Offerings {
	var ofs cloudprovider.Offerings
	for _, zone := range opts.Zones {
		for _, ct := range opts.CapacityTypes {
			price := info.OnDemandPrice
			if ct == v1alpha1.CapacityTypeSpot {
				price = SpotPrice(info, zone)
			}
			ofs = append(ofs, cloudprovider.Offering{Zone: zone, CapacityType: ct, Price: price, Available: true})
		}
	}
	return ofs
}

// NewInstanceType builds one instance type from its facts and offerings; the AWS
// layer uses it for discovered types so both produce the same shape.
func NewInstanceType(info Info, opts Options, ofs cloudprovider.Offerings) *cloudprovider.InstanceType {
	capacity := Capacity(info, opts)
	return &cloudprovider.InstanceType{
		Name:         info.Name,
		Requirements: Requirements(info, opts.Region, ofs),
		Offerings:    ofs,
		Capacity:     capacity,
		Overhead:     ComputeOverhead(info, capacity, opts),
	}
}

// Requirements are the labels a node of this type carries.
func Requirements(info Info, region string, ofs cloudprovider.Offerings) scheduling.Requirements {
	var zones, cts []string
	for _, o := range ofs {
		zones, cts = append(zones, o.Zone), append(cts, o.CapacityType)
	}
	in := func(key string, values ...string) *scheduling.Requirement {
		return scheduling.NewRequirement(key, v1alpha1.OperatorIn, values...)
	}
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }
	reqs := scheduling.NewRequirements(
		in(corev1.LabelInstanceTypeStable, info.Name),
		in(corev1.LabelArchStable, info.Arch),
		in(corev1.LabelOSStable, "linux"),
		in(corev1.LabelTopologyZone, zones...),
		in(v1alpha1.LabelCapacityType, cts...),
		in(v1alpha1.LabelInstanceCategory, info.Category),
		in(v1alpha1.LabelInstanceFamily, info.Family),
		in(v1alpha1.LabelInstanceGeneration, strconv.Itoa(info.Generation)),
		in(v1alpha1.LabelInstanceSize, info.Size),
		in(v1alpha1.LabelInstanceCPU, itoa(info.VCPU)),
		in(v1alpha1.LabelInstanceMemory, itoa(info.MemoryMiB)),
		in(v1alpha1.LabelInstanceNetworkBandwidth, itoa(info.NetworkBandwidthMbps)),
	)
	if region != "" {
		reqs.Add(in(corev1.LabelTopologyRegion, region))
	}
	optional := map[string]string{
		v1alpha1.LabelInstanceHypervisor:              info.Hypervisor,
		v1alpha1.LabelInstanceGPUName:                 info.GPUName,
		v1alpha1.LabelInstanceGPUManufacturer:         info.GPUManufacturer,
		v1alpha1.LabelInstanceAcceleratorName:         info.AcceleratorName,
		v1alpha1.LabelInstanceAcceleratorManufacturer: info.AcceleratorManufacturer,
	}
	if info.GPUCount > 0 {
		optional[v1alpha1.LabelInstanceGPUCount] = itoa(info.GPUCount)
		optional[v1alpha1.LabelInstanceGPUMemory] = itoa(info.GPUMemoryMiB)
	}
	if info.AcceleratorCount > 0 {
		optional[v1alpha1.LabelInstanceAcceleratorCount] = itoa(info.AcceleratorCount)
	}
	if info.LocalNVMeGiB > 0 {
		optional[v1alpha1.LabelInstanceLocalNVMe] = itoa(info.LocalNVMeGiB)
	}
	for k, v := range optional {
		if v != "" {
			reqs.Add(in(k, v))
		}
	}
	return reqs
}
