package awsemu

import (
	"fmt"
)

// InstanceTypeSpec is what DescribeInstanceTypes reports for one type, plus its
// on-demand price for the Pricing API.
type InstanceTypeSpec struct {
	Name                 string
	Arch                 string // amd64 or arm64
	VCPU                 int32
	MemoryMiB            int64
	GPUCount             int32
	GPUName              string
	GPUManufacturer      string
	GPUMemoryMiB         int32 // per GPU
	AcceleratorCount     int32
	AcceleratorName      string
	AcceleratorMfr       string
	LocalNVMeGiB         int64
	NetworkBandwidthMbps int32
	Hypervisor           string // nitro, or empty for bare metal
	MaxENIs              int32
	IPv4PerENI           int32
	OnDemandPrice        float64 // USD per hour
}

// family returns the part of the name before the dot.
// ec2Arch maps a Kubernetes architecture to EC2's name.
func (s InstanceTypeSpec) ec2Arch() string {
	if s.Arch == "arm64" {
		return "arm64"
	}
	return "x86_64"
}

// SmallCatalogue is a dozen real types (figures from the EC2 catalogue), enough
// for tests that need GPU, arm64, burstable and general-purpose shapes.
func SmallCatalogue() []InstanceTypeSpec {
	return []InstanceTypeSpec{
		{Name: "t3.medium", Arch: "amd64", VCPU: 2, MemoryMiB: 4096, NetworkBandwidthMbps: 256, Hypervisor: "nitro", MaxENIs: 3, IPv4PerENI: 6, OnDemandPrice: 0.0416},
		{Name: "m6i.large", Arch: "amd64", VCPU: 2, MemoryMiB: 8192, NetworkBandwidthMbps: 781, Hypervisor: "nitro", MaxENIs: 3, IPv4PerENI: 10, OnDemandPrice: 0.096},
		{Name: "m6i.xlarge", Arch: "amd64", VCPU: 4, MemoryMiB: 16384, NetworkBandwidthMbps: 1562, Hypervisor: "nitro", MaxENIs: 4, IPv4PerENI: 15, OnDemandPrice: 0.192},
		{Name: "m6i.2xlarge", Arch: "amd64", VCPU: 8, MemoryMiB: 32768, NetworkBandwidthMbps: 3125, Hypervisor: "nitro", MaxENIs: 4, IPv4PerENI: 15, OnDemandPrice: 0.384},
		{Name: "c6i.large", Arch: "amd64", VCPU: 2, MemoryMiB: 4096, NetworkBandwidthMbps: 781, Hypervisor: "nitro", MaxENIs: 3, IPv4PerENI: 10, OnDemandPrice: 0.085},
		{Name: "c6i.xlarge", Arch: "amd64", VCPU: 4, MemoryMiB: 8192, NetworkBandwidthMbps: 1562, Hypervisor: "nitro", MaxENIs: 4, IPv4PerENI: 15, OnDemandPrice: 0.17},
		{Name: "r6i.large", Arch: "amd64", VCPU: 2, MemoryMiB: 16384, NetworkBandwidthMbps: 781, Hypervisor: "nitro", MaxENIs: 3, IPv4PerENI: 10, OnDemandPrice: 0.126},
		{Name: "m7g.large", Arch: "arm64", VCPU: 2, MemoryMiB: 8192, NetworkBandwidthMbps: 937, Hypervisor: "nitro", MaxENIs: 3, IPv4PerENI: 10, OnDemandPrice: 0.0816},
		{Name: "c7g.xlarge", Arch: "arm64", VCPU: 4, MemoryMiB: 8192, NetworkBandwidthMbps: 1876, Hypervisor: "nitro", MaxENIs: 4, IPv4PerENI: 15, OnDemandPrice: 0.145},
		{Name: "g5.xlarge", Arch: "amd64", VCPU: 4, MemoryMiB: 16384, GPUCount: 1, GPUName: "a10g", GPUManufacturer: "nvidia", GPUMemoryMiB: 22888, LocalNVMeGiB: 250, NetworkBandwidthMbps: 2500, Hypervisor: "nitro", MaxENIs: 4, IPv4PerENI: 15, OnDemandPrice: 1.006},
		{Name: "g5.12xlarge", Arch: "amd64", VCPU: 48, MemoryMiB: 196608, GPUCount: 4, GPUName: "a10g", GPUManufacturer: "nvidia", GPUMemoryMiB: 22888, LocalNVMeGiB: 3800, NetworkBandwidthMbps: 40000, Hypervisor: "nitro", MaxENIs: 15, IPv4PerENI: 50, OnDemandPrice: 5.672},
		{Name: "inf2.xlarge", Arch: "amd64", VCPU: 4, MemoryMiB: 16384, AcceleratorCount: 1, AcceleratorName: "inferentia2", AcceleratorMfr: "aws", NetworkBandwidthMbps: 2083, Hypervisor: "nitro", MaxENIs: 4, IPv4PerENI: 15, OnDemandPrice: 0.7582},
	}
}

// SyntheticCatalogue returns n made-up general-purpose types named
// s<family>-<i>.<size>, for benchmarks that need a catalogue of a given size.
// Sizes double in vCPU; prices are linear in vCPU and memory.
func SyntheticCatalogue(n int) []InstanceTypeSpec {
	sizes := []string{"large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge"}
	ratios := []int64{2, 4, 8} // GiB per vCPU
	out := make([]InstanceTypeSpec, 0, n)
	for i := 0; len(out) < n; i++ {
		ratio := ratios[i%len(ratios)]
		arch := "amd64"
		if i%2 == 1 {
			arch = "arm64"
		}
		for s, size := range sizes {
			if len(out) == n {
				break
			}
			vcpu := int32(2) << s
			out = append(out, InstanceTypeSpec{
				Name: fmt.Sprintf("s%d.%s", i, size), Arch: arch, VCPU: vcpu,
				MemoryMiB: int64(vcpu) * ratio * 1024, NetworkBandwidthMbps: 390 * vcpu,
				Hypervisor: "nitro", MaxENIs: 4, IPv4PerENI: 15,
				OnDemandPrice: 0.02*float64(vcpu) + 0.004*float64(int64(vcpu)*ratio) + 0.0001*float64(i),
			})
		}
	}
	return out
}
