package schedulertest

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

const (
	gib = int64(1) << 30
	mib = int64(1) << 20
	// c1UnitPrice is C1's price per vCPU per hour, on every offering.
	c1UnitPrice = 0.3147483648
	// spotFactor is C2's spot price as a fraction of on-demand.
	spotFactor = 0.7
)

// Overhead is every benchmark type's reservation: 100m CPU and 10Mi memory as
// kube-reserved, nothing else.
func Overhead() cloudprovider.Overhead {
	return cloudprovider.Overhead{KubeReserved: scheduling.Resources{CPU: 100, Memory: 10 * mib}}
}

// C1 is "linear400": fake-it-0..399 with i+1 vCPU, 2(i+1) GiB, 10(i+1) pods;
// spot in zones 1-2 and on-demand in zones 1-3, all at (i+1)*0.3147483648.
func C1() []*cloudprovider.InstanceType {
	out := make([]*cloudprovider.InstanceType, 0, 400)
	for i := range int64(400) {
		price := float64(i+1) * c1UnitPrice
		var ofs cloudprovider.Offerings
		for _, z := range []string{"test-zone-1", "test-zone-2"} {
			ofs = append(ofs, offering(z, v1alpha1.CapacityTypeSpot, price))
		}
		for _, z := range []string{"test-zone-1", "test-zone-2", "test-zone-3"} {
			ofs = append(ofs, offering(z, v1alpha1.CapacityTypeOnDemand, price))
		}
		out = append(out, NewInstanceType(fmt.Sprintf("fake-it-%d", i), i+1, 2*(i+1)*gib, 10*(i+1), ofs))
	}
	return out
}

// C2 is "ratio36": <c|m|r>-<vcpu>x-amd64-linux with 2, 4 or 8 GiB per vCPU,
// min(16 vCPU, 1024) pods, spot and on-demand in test-zone-a..d; on-demand costs
// 0.025 per vCPU plus 0.001 per GB (1e9 bytes), spot 0.7 of that.
func C2() []*cloudprovider.InstanceType {
	var out []*cloudprovider.InstanceType
	for _, vcpu := range []int64{1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256} {
		for _, f := range []struct {
			name   string
			factor int64
		}{{"c", 2}, {"m", 4}, {"r", 8}} {
			mem := f.factor * vcpu * gib
			onDemand := 0.025*float64(vcpu) + 0.001*float64(mem)/1e9
			var ofs cloudprovider.Offerings
			for _, z := range []string{"test-zone-a", "test-zone-b", "test-zone-c", "test-zone-d"} {
				ofs = append(ofs, offering(z, v1alpha1.CapacityTypeSpot, spotFactor*onDemand), offering(z, v1alpha1.CapacityTypeOnDemand, onDemand))
			}
			name := fmt.Sprintf("%s-%dx-amd64-linux", f.name, vcpu)
			out = append(out, NewInstanceType(name, vcpu, mem, min(16*vcpu, 1024), ofs))
		}
	}
	return out
}

func offering(zone, capacityType string, price float64) cloudprovider.Offering {
	return cloudprovider.Offering{Zone: zone, CapacityType: capacityType, Price: price, Available: true}
}

// NewInstanceType builds an amd64 linux type with the benchmark overhead; its
// zone and capacity-type labels span its offerings.
func NewInstanceType(name string, vcpu, memBytes, pods int64, ofs cloudprovider.Offerings) *cloudprovider.InstanceType {
	var zones, cts []string
	for _, o := range ofs {
		zones, cts = append(zones, o.Zone), append(cts, o.CapacityType)
	}
	in := func(key string, values ...string) *scheduling.Requirement {
		return scheduling.NewRequirement(key, v1alpha1.OperatorIn, values...)
	}
	return &cloudprovider.InstanceType{
		Name: name,
		Requirements: scheduling.NewRequirements(
			in(corev1.LabelInstanceTypeStable, name),
			in(corev1.LabelArchStable, "amd64"),
			in(corev1.LabelOSStable, "linux"),
			in(corev1.LabelTopologyZone, zones...),
			in(v1alpha1.LabelCapacityType, cts...),
		),
		Offerings: ofs,
		Capacity:  scheduling.Resources{CPU: vcpu * 1000, Memory: memBytes, Pods: pods},
		Overhead:  Overhead(),
	}
}
