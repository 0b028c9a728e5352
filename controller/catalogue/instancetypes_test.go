package catalogue_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
)

// labels renders an instance type's requirements as key -> allowed values.
func labels(it *cloudprovider.InstanceType) map[string][]string {
	out := map[string][]string{}
	for key, r := range it.Requirements {
		out[key] = r.Values()
	}
	return out
}

func TestInstanceTypeLabels(t *testing.T) {
	allZones := []string{"us-east-1a", "us-east-1b", "us-east-1c"}
	both := []string{"on-demand", "spot"}
	for _, tc := range []struct {
		name string
		want map[string][]string
	}{
		{"g5.12xlarge", map[string][]string{
			"node.kubernetes.io/instance-type": {"g5.12xlarge"}, "kubernetes.io/arch": {"amd64"}, "kubernetes.io/os": {"linux"},
			"topology.kubernetes.io/region": {"us-east-1"}, "topology.kubernetes.io/zone": allZones, "stowage.dev/capacity-type": both,
			"stowage.dev/instance-category": {"g"}, "stowage.dev/instance-family": {"g5"}, "stowage.dev/instance-generation": {"5"},
			"stowage.dev/instance-size": {"12xlarge"}, "stowage.dev/instance-cpu": {"48"}, "stowage.dev/instance-memory": {"196608"},
			"stowage.dev/instance-network-bandwidth": {"40000"}, "stowage.dev/instance-hypervisor": {"nitro"},
			// 4 NVIDIA A10G with 22888 MiB each, and 3800 GiB of NVMe (data/README.md spot check).
			"stowage.dev/instance-gpu-count": {"4"}, "stowage.dev/instance-gpu-name": {"a10g"},
			"stowage.dev/instance-gpu-manufacturer": {"nvidia"}, "stowage.dev/instance-gpu-memory": {"22888"},
			"stowage.dev/instance-local-nvme": {"3800"},
		}},
		{"m7g.large", map[string][]string{
			"node.kubernetes.io/instance-type": {"m7g.large"}, "kubernetes.io/arch": {"arm64"}, "kubernetes.io/os": {"linux"},
			"topology.kubernetes.io/region": {"us-east-1"}, "topology.kubernetes.io/zone": allZones, "stowage.dev/capacity-type": both,
			"stowage.dev/instance-category": {"m"}, "stowage.dev/instance-family": {"m7g"}, "stowage.dev/instance-generation": {"7"},
			"stowage.dev/instance-size": {"large"}, "stowage.dev/instance-cpu": {"2"}, "stowage.dev/instance-memory": {"8192"},
			"stowage.dev/instance-network-bandwidth": {"937"}, "stowage.dev/instance-hypervisor": {"nitro"},
		}},
		{"c6i.metal", map[string][]string{ // bare metal: no hypervisor label
			"node.kubernetes.io/instance-type": {"c6i.metal"}, "kubernetes.io/arch": {"amd64"}, "kubernetes.io/os": {"linux"},
			"topology.kubernetes.io/region": {"us-east-1"}, "topology.kubernetes.io/zone": allZones, "stowage.dev/capacity-type": both,
			"stowage.dev/instance-category": {"c"}, "stowage.dev/instance-family": {"c6i"}, "stowage.dev/instance-generation": {"6"},
			"stowage.dev/instance-size": {"metal"}, "stowage.dev/instance-cpu": {"128"}, "stowage.dev/instance-memory": {"262144"},
			"stowage.dev/instance-network-bandwidth": {"50000"},
		}},
		{"inf2.xlarge", map[string][]string{
			"node.kubernetes.io/instance-type": {"inf2.xlarge"}, "kubernetes.io/arch": {"amd64"}, "kubernetes.io/os": {"linux"},
			"topology.kubernetes.io/region": {"us-east-1"}, "topology.kubernetes.io/zone": allZones, "stowage.dev/capacity-type": both,
			"stowage.dev/instance-category": {"inf"}, "stowage.dev/instance-family": {"inf2"}, "stowage.dev/instance-generation": {"2"},
			"stowage.dev/instance-size": {"xlarge"}, "stowage.dev/instance-cpu": {"4"}, "stowage.dev/instance-memory": {"16384"},
			"stowage.dev/instance-network-bandwidth": {"2083"}, "stowage.dev/instance-hypervisor": {"nitro"},
			// one AWS Inferentia2 device (data/README.md: accelerator columns).
			"stowage.dev/instance-accelerator-count": {"1"}, "stowage.dev/instance-accelerator-name": {"inferentia2"},
			"stowage.dev/instance-accelerator-manufacturer": {"aws"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := labels(build(t, tc.name, nil))
			for _, k := range slices.Sorted(maps.Keys(tc.want)) {
				if !slices.Equal(got[k], tc.want[k]) {
					t.Errorf("%s = %v, want %v", k, got[k], tc.want[k])
				}
			}
			for _, k := range slices.Sorted(maps.Keys(got)) {
				if _, ok := tc.want[k]; !ok {
					t.Errorf("unexpected label %s = %v", k, got[k])
				}
			}
		})
	}
}

func TestInstanceTypeOfferings(t *testing.T) {
	infos := catalogue.Builtin()
	byName := builtinByName()
	for _, tc := range []struct {
		name          string
		opts          catalogue.Options
		zones, cts    []string
		wantOfferings int
	}{
		{"defaults: three zones, spot and on-demand", catalogue.DefaultOptions(),
			[]string{"us-east-1a", "us-east-1b", "us-east-1c"}, []string{"on-demand", "spot"}, 6},
		{"one zone, on-demand only", catalogue.Options{Region: "eu-west-1", Zones: []string{"eu-west-1b"}, CapacityTypes: []string{"on-demand"}},
			[]string{"eu-west-1b"}, []string{"on-demand"}, 1},
		{"two zones, spot only", catalogue.Options{Region: "us-west-2", Zones: []string{"us-west-2a", "us-west-2d"}, CapacityTypes: []string{"spot"}},
			[]string{"us-west-2a", "us-west-2d"}, []string{"spot"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			types := catalogue.InstanceTypes(infos, tc.opts)
			if len(types) != len(infos) {
				t.Fatalf("%d instance types from %d facts", len(types), len(infos))
			}
			for _, it := range types {
				info := byName[it.Name]
				if len(it.Offerings) != tc.wantOfferings {
					t.Errorf("%s: %d offerings, want %d", it.Name, len(it.Offerings), tc.wantOfferings)
				}
				seen := map[[2]string]bool{}
				for _, o := range it.Offerings {
					seen[[2]string{o.Zone, o.CapacityType}] = true
					want := info.OnDemandPrice
					if o.CapacityType == "spot" {
						want = catalogue.SpotPrice(info, o.Zone)
					}
					if !o.Available || o.Price != want || !slices.Contains(tc.zones, o.Zone) || !slices.Contains(tc.cts, o.CapacityType) {
						t.Errorf("%s: offering %+v, want available in %v/%v at %f", it.Name, o, tc.zones, tc.cts, want)
					}
				}
				if len(seen) != tc.wantOfferings {
					t.Errorf("%s: offerings repeat a zone and capacity type: %+v", it.Name, it.Offerings)
				}
				l := labels(it)
				if !slices.Equal(l["topology.kubernetes.io/zone"], tc.zones) || !slices.Equal(l["stowage.dev/capacity-type"], tc.cts) ||
					!slices.Equal(l["topology.kubernetes.io/region"], []string{tc.opts.Region}) {
					t.Errorf("%s: zone %v, capacity type %v, region %v; want %v, %v, %s", it.Name, l["topology.kubernetes.io/zone"],
						l["stowage.dev/capacity-type"], l["topology.kubernetes.io/region"], tc.zones, tc.cts, tc.opts.Region)
				}
			}
		})
	}
}

func TestInstanceTypeWithoutRegionHasNoRegionLabel(t *testing.T) {
	it := catalogue.InstanceTypes([]catalogue.Info{builtinByName()["m6i.large"]}, catalogue.Options{Zones: []string{"z1"}})[0]
	if it.Requirements.Has("topology.kubernetes.io/region") {
		t.Errorf("region label %v without a region", it.Requirements.Get("topology.kubernetes.io/region"))
	}
	if it.Capacity.EphemeralStorage != catalogue.DefaultRootVolumeGiB*gib {
		t.Errorf("ephemeral storage %d, want the %d GiB default", it.Capacity.EphemeralStorage, catalogue.DefaultRootVolumeGiB)
	}
}
