package instancetype

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/stowage-dev/stowage/controller/catalogue"
)

// discovered is one refresh's result: type facts and the zones offering each.
type discovered struct {
	infos []catalogue.Info
	zones map[string][]string // instance type -> zones that offer it
}

func (p *Provider) discover(ctx context.Context) (*discovered, error) {
	infos, err := p.describeTypes(ctx)
	if err != nil {
		return nil, err
	}
	zones, err := p.describeOfferings(ctx)
	if err != nil {
		return nil, err
	}
	return &discovered{infos: infos, zones: zones}, nil
}

func (p *Provider) describeTypes(ctx context.Context) ([]catalogue.Info, error) {
	in := &ec2.DescribeInstanceTypesInput{Filters: []ec2types.Filter{
		{Name: aws.String("supported-virtualization-type"), Values: []string{"hvm"}},
		{Name: aws.String("processor-info.supported-architecture"), Values: []string{"x86_64", "arm64"}},
	}}
	var out []catalogue.Info
	pager := ec2.NewDescribeInstanceTypesPaginator(p.ec2, in)
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("describing instance types: %w", err)
		}
		for i := range page.InstanceTypes {
			if info, ok := ToInfo(&page.InstanceTypes[i]); ok {
				out = append(out, info)
			}
		}
	}
	return out, nil
}

func (p *Provider) describeOfferings(ctx context.Context) (map[string][]string, error) {
	in := &ec2.DescribeInstanceTypeOfferingsInput{LocationType: ec2types.LocationTypeAvailabilityZone}
	out := map[string][]string{}
	pager := ec2.NewDescribeInstanceTypeOfferingsPaginator(p.ec2, in)
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("describing instance type offerings: %w", err)
		}
		for _, o := range page.InstanceTypeOfferings {
			name := string(o.InstanceType)
			out[name] = append(out[name], aws.ToString(o.Location))
		}
	}
	return out, nil
}

// ToInfo turns what DescribeInstanceTypes says about a type into the
// catalogue's facts, so that discovered and built-in types take the same shape.
// Types of other architectures are skipped.
func ToInfo(t *ec2types.InstanceTypeInfo) (catalogue.Info, bool) {
	name := string(t.InstanceType)
	family, size, _ := strings.Cut(name, ".")
	info := catalogue.Info{Name: name, Family: family, Size: size, Hypervisor: string(t.Hypervisor)}
	info.Category, info.Generation = splitFamily(family)
	if t.ProcessorInfo == nil || len(t.ProcessorInfo.SupportedArchitectures) == 0 {
		return info, false
	}
	switch t.ProcessorInfo.SupportedArchitectures[0] {
	case ec2types.ArchitectureTypeX8664:
		info.Arch = "amd64"
	case ec2types.ArchitectureTypeArm64:
		info.Arch = "arm64"
	default:
		return info, false
	}
	if t.VCpuInfo != nil {
		info.VCPU = int64(aws.ToInt32(t.VCpuInfo.DefaultVCpus))
	}
	if t.MemoryInfo != nil {
		info.MemoryMiB = aws.ToInt64(t.MemoryInfo.SizeInMiB)
	}
	addAccelerators(&info, t)
	addNetwork(&info, t.NetworkInfo)
	if t.InstanceStorageInfo != nil {
		info.LocalNVMeGiB = aws.ToInt64(t.InstanceStorageInfo.TotalSizeInGB)
	}
	return info, info.VCPU > 0 && info.MemoryMiB > 0
}

// splitFamily splits m6i into category m and generation 6, inf2 into inf and 2.
func splitFamily(family string) (string, int) {
	i := strings.IndexFunc(family, unicode.IsDigit)
	if i < 0 {
		return family, 0
	}
	j := i
	for j < len(family) && unicode.IsDigit(rune(family[j])) {
		j++
	}
	gen, _ := strconv.Atoi(family[i:j])
	return family[:i], gen
}

func addAccelerators(info *catalogue.Info, t *ec2types.InstanceTypeInfo) {
	if t.GpuInfo != nil && len(t.GpuInfo.Gpus) > 0 {
		g := t.GpuInfo.Gpus[0]
		info.GPUCount = int64(aws.ToInt32(g.Count))
		info.GPUName = strings.ToLower(aws.ToString(g.Name))
		info.GPUManufacturer = strings.ToLower(aws.ToString(g.Manufacturer))
		if g.MemoryInfo != nil {
			info.GPUMemoryMiB = int64(aws.ToInt32(g.MemoryInfo.SizeInMiB))
		}
	}
	if t.NeuronInfo != nil && len(t.NeuronInfo.NeuronDevices) > 0 {
		// Neuron devices are AWS's Inferentia and Trainium chips; EC2 does not
		// name their manufacturer as it does a GPU's.
		d := t.NeuronInfo.NeuronDevices[0]
		info.AcceleratorCount = int64(aws.ToInt32(d.Count))
		info.AcceleratorName = strings.ToLower(aws.ToString(d.Name))
		info.AcceleratorManufacturer = "aws"
	}
}

func addNetwork(info *catalogue.Info, n *ec2types.NetworkInfo) {
	if n == nil {
		return
	}
	info.MaxENIs = int64(aws.ToInt32(n.MaximumNetworkInterfaces))
	info.IPv4PerENI = int64(aws.ToInt32(n.Ipv4AddressesPerInterface))
	def := aws.ToInt32(n.DefaultNetworkCardIndex)
	for _, c := range n.NetworkCards {
		if aws.ToInt32(c.NetworkCardIndex) != def {
			continue
		}
		// The VPC CNI can use only the default card's interfaces.
		info.MaxENIs = int64(aws.ToInt32(c.MaximumNetworkInterfaces))
		info.NetworkBandwidthMbps = int64(math.Round(aws.ToFloat64(c.BaselineBandwidthInGbps) * 1000))
	}
	if info.MaxENIs > 0 && info.IPv4PerENI > 0 {
		info.MaxPodsENI = info.MaxENIs*(info.IPv4PerENI-1) + 2
	}
}
