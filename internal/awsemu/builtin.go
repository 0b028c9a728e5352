package awsemu

import "github.com/stowage-dev/stowage/controller/catalogue"

// BuiltinCatalogue is the project's built-in instance catalogue (real EC2
// figures) as emulator types, so that discovery can be checked against it.
func BuiltinCatalogue() []InstanceTypeSpec {
	infos := catalogue.Builtin()
	out := make([]InstanceTypeSpec, 0, len(infos))
	for _, i := range infos {
		out = append(out, InstanceTypeSpec{
			Name: i.Name, Arch: i.Arch, VCPU: int32(i.VCPU), MemoryMiB: i.MemoryMiB, //nolint:gosec // small numbers
			GPUCount: int32(i.GPUCount), GPUName: i.GPUName, GPUManufacturer: i.GPUManufacturer, //nolint:gosec // small
			GPUMemoryMiB: int32(i.GPUMemoryMiB), AcceleratorCount: int32(i.AcceleratorCount), //nolint:gosec // small
			AcceleratorName: i.AcceleratorName, AcceleratorMfr: i.AcceleratorManufacturer, LocalNVMeGiB: i.LocalNVMeGiB,
			NetworkBandwidthMbps: int32(i.NetworkBandwidthMbps), Hypervisor: i.Hypervisor, //nolint:gosec // small
			MaxENIs: int32(i.MaxENIs), IPv4PerENI: int32(i.IPv4PerENI), OnDemandPrice: i.OnDemandPrice, //nolint:gosec // small
		})
	}
	return out
}
