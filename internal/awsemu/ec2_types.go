package awsemu

import (
	"fmt"
	"strconv"
	"strings"
)

type xmlInstanceType struct {
	InstanceType             string         `xml:"instanceType"`
	CurrentGeneration        bool           `xml:"currentGeneration"`
	BareMetal                bool           `xml:"bareMetal"`
	Hypervisor               string         `xml:"hypervisor,omitempty"`
	Burstable                bool           `xml:"burstablePerformanceSupported"`
	UsageClasses             []string       `xml:"supportedUsageClasses>item"`
	Virtualization           []string       `xml:"supportedVirtualizationTypes>item"`
	Processor                xmlProcessor   `xml:"processorInfo"`
	VCPU                     xmlVCPU        `xml:"vCpuInfo"`
	Memory                   xmlMemory      `xml:"memoryInfo"`
	InstanceStorageSupported bool           `xml:"instanceStorageSupported"`
	Storage                  *xmlStorage    `xml:"instanceStorageInfo,omitempty"`
	GPU                      *xmlGPUInfo    `xml:"gpuInfo,omitempty"`
	Neuron                   *xmlNeuronInfo `xml:"neuronInfo,omitempty"`
	Network                  xmlNetworkInfo `xml:"networkInfo"`
	EBS                      *xmlEBSInfo    `xml:"ebsInfo,omitempty"`
}

type xmlProcessor struct {
	Architectures []string `xml:"supportedArchitectures>item"`
	Manufacturer  string   `xml:"manufacturer"`
}

type xmlVCPU struct {
	DefaultVCpus int32 `xml:"defaultVCpus"`
}

type xmlMemory struct {
	SizeInMiB int64 `xml:"sizeInMiB"`
}

type xmlStorage struct {
	TotalSizeInGB int64  `xml:"totalSizeInGB"`
	NvmeSupport   string `xml:"nvmeSupport"`
}

type xmlGPUInfo struct {
	GPUs  []xmlGPU `xml:"gpus>item"`
	Total int64    `xml:"totalGpuMemoryInMiB"`
}

type xmlGPU struct {
	Name         string    `xml:"name"`
	Manufacturer string    `xml:"manufacturer"`
	Count        int32     `xml:"count"`
	Memory       xmlMemory `xml:"memoryInfo"`
}

type xmlNeuronInfo struct {
	Devices []xmlNeuronDevice `xml:"neuronDevices>item"`
}

type xmlNeuronDevice struct {
	Name  string `xml:"name"`
	Count int32  `xml:"count"`
}

type xmlNetworkInfo struct {
	MaxInterfaces  int32            `xml:"maximumNetworkInterfaces"`
	IPv4PerENI     int32            `xml:"ipv4AddressesPerInterface"`
	DefaultCard    int32            `xml:"defaultNetworkCardIndex"`
	Cards          []xmlNetworkCard `xml:"networkCards>item"`
	Performance    string           `xml:"networkPerformance"`
	ENASupport     string           `xml:"enaSupport"`
	MaximumCards   int32            `xml:"maximumNetworkCards"`
	IPv6Supported  bool             `xml:"ipv6Supported"`
	EncryptionInTr bool             `xml:"encryptionInTransitSupported"`
}

type xmlNetworkCard struct {
	Index         int32   `xml:"networkCardIndex"`
	MaxInterfaces int32   `xml:"maximumNetworkInterfaces"`
	BaselineGbps  float64 `xml:"baselineBandwidthInGbps"`
	PeakGbps      float64 `xml:"peakBandwidthInGbps"`
}

type xmlEBSInfo struct {
	EBSOptimizedSupport string `xml:"ebsOptimizedSupport"`
}

func toXMLType(s InstanceTypeSpec) xmlInstanceType {
	mfr := "intel"
	if s.Arch == "arm64" {
		mfr = "aws"
	}
	gbps := float64(s.NetworkBandwidthMbps) / 1000
	t := xmlInstanceType{
		InstanceType: s.Name, CurrentGeneration: true, BareMetal: s.Hypervisor == "", Hypervisor: s.Hypervisor,
		Burstable: strings.HasPrefix(s.Name, "t"), UsageClasses: []string{"on-demand", "spot"},
		Virtualization: []string{"hvm"}, Processor: xmlProcessor{[]string{s.ec2Arch()}, mfr},
		VCPU: xmlVCPU{s.VCPU}, Memory: xmlMemory{s.MemoryMiB},
		Network: xmlNetworkInfo{MaxInterfaces: s.MaxENIs, IPv4PerENI: s.IPv4PerENI, MaximumCards: 1,
			Cards:       []xmlNetworkCard{{0, s.MaxENIs, gbps, gbps}},
			Performance: fmt.Sprintf("Up to %s Gigabit", strconv.FormatFloat(gbps, 'f', -1, 64)), ENASupport: "required", IPv6Supported: true},
		EBS: &xmlEBSInfo{"default"},
	}
	if s.LocalNVMeGiB > 0 {
		t.InstanceStorageSupported = true
		t.Storage = &xmlStorage{s.LocalNVMeGiB, "required"}
	}
	if s.GPUCount > 0 {
		t.GPU = &xmlGPUInfo{GPUs: []xmlGPU{{strings.ToUpper(s.GPUName), cases(s.GPUManufacturer), s.GPUCount, xmlMemory{int64(s.GPUMemoryMiB)}}},
			Total: int64(s.GPUMemoryMiB) * int64(s.GPUCount)}
	}
	if s.AcceleratorCount > 0 {
		t.Neuron = &xmlNeuronInfo{Devices: []xmlNeuronDevice{{cases(s.AcceleratorName), s.AcceleratorCount}}}
	}
	return t
}

// cases capitalises the first letter, as EC2 spells manufacturer names (NVIDIA is all caps).
func cases(s string) string {
	if s == "nvidia" || s == "aws" {
		return strings.ToUpper(s)
	}
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

type describeTypesResponse struct {
	ResponseMeta
	Types     []xmlInstanceType `xml:"instanceTypeSet>item"`
	NextToken string            `xml:"nextToken,omitempty"`
}

func (e *Emulator) describeInstanceTypes(p params) (any, *APIError) {
	names := p.strings("InstanceType")
	specs := e.InstanceTypes()
	var matched []InstanceTypeSpec
	for _, s := range specs {
		if (len(names) == 0 || matchValue(names, s.Name)) && typeMatches(s, p.filters()) {
			matched = append(matched, s)
		}
	}
	if len(names) > 0 && len(matched) < len(names) {
		return nil, &APIError{"InvalidInstanceType", fmt.Sprintf("The following supplied instance types do not exist: %v", names)}
	}
	from, to, next, err := page(p, len(matched), 5, 100, 100)
	if err != nil {
		return nil, err
	}
	out := describeTypesResponse{ResponseMeta: ec2Resp("DescribeInstanceTypes"), NextToken: next}
	for _, s := range matched[from:to] {
		out.Types = append(out.Types, toXMLType(s))
	}
	return out, nil
}

func typeMatches(s InstanceTypeSpec, fs []filter) bool {
	for _, f := range fs {
		var got string
		switch f.name {
		case "instance-type":
			got = s.Name
		case "processor-info.supported-architecture":
			got = s.ec2Arch()
		case "current-generation":
			got = "true"
		case "supported-virtualization-type":
			got = "hvm"
		default:
			continue
		}
		if !matchValue(f.values, got) {
			return false
		}
	}
	return true
}
