package catalogue_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/stowage-dev/stowage/controller/catalogue"
)

// header is the column list data/README.md documents, in file order.
const header = "name,family,category,generation,size,arch,vcpu,memory_mib,gpu_count,gpu_name,gpu_manufacturer," +
	"gpu_memory_mib,accelerator_count,accelerator_name,accelerator_manufacturer,local_nvme_gib,network_bandwidth_mbps," +
	"hypervisor,max_enis,ipv4_per_eni,max_pods_eni,on_demand_usd_per_hour_us_east_1"

// m6iLarge is a valid row; withCell edits one of its cells.
const m6iLarge = "m6i.large,m6i,m,6,large,amd64,2,8192,,,,,,,,,781,nitro,3,10,29,0.096000"

func withCell(column, value string) string {
	cells := strings.Split(m6iLarge, ",")
	cells[slices.Index(strings.Split(header, ","), column)] = value
	return strings.Join(cells, ",")
}

func csvOf(rows ...string) string {
	return strings.Join(append([]string{header}, rows...), "\n") + "\n"
}

func TestParseRejectsBadRows(t *testing.T) {
	const c6iLarge = "c6i.large,c6i,c,6,large,amd64,2,4096,,,,,,,,,781,nitro,3,10,29,0.085000"
	for _, tc := range []struct {
		name string
		text string
		// every substring must appear in the error
		want []string
	}{
		{"vcpu not a number", csvOf(withCell("vcpu", "two")), []string{"line 2", "column vcpu", `"two"`}},
		{"vcpu missing", csvOf(withCell("vcpu", "")), []string{"line 2", "column vcpu"}},
		{"generation not an integer", csvOf(withCell("generation", "6.0")), []string{"line 2", "column generation"}},
		{"negative memory", csvOf(withCell("memory_mib", "-8192")), []string{"line 2", "column memory_mib", "non-negative"}},
		{"optional gpu_count not a number", csvOf(withCell("gpu_count", "four")), []string{"line 2", "column gpu_count"}},
		{"optional local_nvme_gib negative", csvOf(withCell("local_nvme_gib", "-1")), []string{"line 2", "column local_nvme_gib"}},
		{"bandwidth missing", csvOf(withCell("network_bandwidth_mbps", "")), []string{"line 2", "column network_bandwidth_mbps"}},
		{"max_enis missing", csvOf(withCell("max_enis", "")), []string{"line 2", "column max_enis"}},
		{"ipv4_per_eni in exponent form", csvOf(withCell("ipv4_per_eni", "1e1")), []string{"line 2", "column ipv4_per_eni"}},
		{"max_pods_eni negative", csvOf(withCell("max_pods_eni", "-29")), []string{"line 2", "column max_pods_eni"}},
		{"zero price", csvOf(withCell("on_demand_usd_per_hour_us_east_1", "0")), []string{"line 2", "column on_demand_usd_per_hour_us_east_1", "positive price"}},
		{"negative price", csvOf(withCell("on_demand_usd_per_hour_us_east_1", "-0.1")), []string{"line 2", "column on_demand_usd_per_hour_us_east_1"}},
		{"missing price", csvOf(withCell("on_demand_usd_per_hour_us_east_1", "")), []string{"line 2", "column on_demand_usd_per_hour_us_east_1"}},
		{"NaN price", csvOf(withCell("on_demand_usd_per_hour_us_east_1", "NaN")), []string{"line 2", "column on_demand_usd_per_hour_us_east_1"}},
		{"infinite price", csvOf(withCell("on_demand_usd_per_hour_us_east_1", "+Inf")), []string{"line 2", "column on_demand_usd_per_hour_us_east_1"}},
		{"unknown arch", csvOf(withCell("arch", "x86_64")), []string{"line 2", "arch", "amd64 or arm64"}},
		{"missing name", csvOf(withCell("name", "")), []string{"line 2", "name"}},
		{"missing family", csvOf(withCell("family", "")), []string{"line 2", "family"}},
		{"bad row after a good one", csvOf(c6iLarge, withCell("max_enis", "three")), []string{"line 3", "column max_enis"}},
		{"duplicate name", csvOf(m6iLarge, c6iLarge, m6iLarge), []string{"line 4", "m6i.large", "listed twice"}},
		{"short row", csvOf(m6iLarge, "t3.nano,t3,t"), []string{"line 3", "wrong number of fields"}},
		{"header with a column renamed", strings.Replace(csvOf(m6iLarge), "vcpu", "vcpus", 1), []string{"header must be", header}},
		{"no header", m6iLarge + "\n", []string{"header must be"}},
		{"empty", "", []string{"header must be"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			infos, err := catalogue.Parse(tc.text)
			if err == nil {
				t.Fatalf("Parse accepted the input: %+v", infos)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestParseReadsEveryColumn(t *testing.T) {
	// Rows out of name order, to check the sort; values copied from data/ec2-instance-types.csv.
	text := csvOf(
		m6iLarge,
		"g5.12xlarge,g5,g,5,12xlarge,amd64,48,196608,4,a10g,nvidia,22888,,,,3800,40000,nitro,15,50,737,5.672000",
		"inf2.xlarge,inf2,inf,2,xlarge,amd64,4,16384,,,,,1,inferentia2,aws,,2083,nitro,4,15,58,0.758200",
		"c7g.metal,c7g,c,7,metal,arm64,64,131072,,,,,,,,,30000,,15,50,737,2.320000",
	)
	infos, err := catalogue.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []catalogue.Info{
		{Name: "c7g.metal", Family: "c7g", Category: "c", Generation: 7, Size: "metal", Arch: "arm64", VCPU: 64, MemoryMiB: 131072,
			NetworkBandwidthMbps: 30000, MaxENIs: 15, IPv4PerENI: 50, MaxPodsENI: 737, OnDemandPrice: 2.32},
		{Name: "g5.12xlarge", Family: "g5", Category: "g", Generation: 5, Size: "12xlarge", Arch: "amd64", VCPU: 48, MemoryMiB: 196608,
			GPUCount: 4, GPUName: "a10g", GPUManufacturer: "nvidia", GPUMemoryMiB: 22888, LocalNVMeGiB: 3800, NetworkBandwidthMbps: 40000,
			Hypervisor: "nitro", MaxENIs: 15, IPv4PerENI: 50, MaxPodsENI: 737, OnDemandPrice: 5.672},
		{Name: "inf2.xlarge", Family: "inf2", Category: "inf", Generation: 2, Size: "xlarge", Arch: "amd64", VCPU: 4, MemoryMiB: 16384,
			AcceleratorCount: 1, AcceleratorName: "inferentia2", AcceleratorManufacturer: "aws", NetworkBandwidthMbps: 2083, Hypervisor: "nitro", MaxENIs: 4, IPv4PerENI: 15,
			MaxPodsENI: 58, OnDemandPrice: 0.7582},
		{Name: "m6i.large", Family: "m6i", Category: "m", Generation: 6, Size: "large", Arch: "amd64", VCPU: 2, MemoryMiB: 8192,
			NetworkBandwidthMbps: 781, Hypervisor: "nitro", MaxENIs: 3, IPv4PerENI: 10, MaxPodsENI: 29, OnDemandPrice: 0.096},
	}
	if !slices.Equal(infos, want) {
		t.Errorf("Parse =\n%+v\nwant (sorted by name)\n%+v", infos, want)
	}
}

// familyRows is the table in data/README.md: rows per family.
var familyRows = map[string]int{
	"t3": 7, "c6i": 10, "c7i": 11, "m6i": 10, "m7i": 11, "r6i": 10, "r7i": 11,
	"c6g": 9, "c7g": 9, "m6g": 9, "m7g": 9, "r7g": 9,
	"g5": 8, "g6": 8, "g6e": 8, "p4d": 1, "p5": 2, "inf2": 4, "trn1": 2,
}

func TestBuiltinHasEveryDocumentedType(t *testing.T) {
	infos := catalogue.Builtin()
	if len(infos) != 148 {
		t.Errorf("Builtin has %d types, want 148", len(infos))
	}
	got := map[string]int{}
	for i, info := range infos {
		got[info.Family]++
		if i > 0 && infos[i-1].Name >= info.Name {
			t.Errorf("types not sorted and unique by name at %d: %s then %s", i, infos[i-1].Name, info.Name)
		}
		if info.Name != info.Family+"."+info.Size {
			t.Errorf("%s: family %q and size %q do not make up the name", info.Name, info.Family, info.Size)
		}
	}
	for family, n := range familyRows {
		if got[family] != n {
			t.Errorf("family %s has %d types, want %d", family, got[family], n)
		}
	}
	for family := range got {
		if _, ok := familyRows[family]; !ok {
			t.Errorf("family %s is not one of the 19 documented families", family)
		}
	}
}

func TestBuiltinMaxPodsFollowsTheENIFormula(t *testing.T) {
	for _, info := range catalogue.Builtin() {
		if want := info.MaxENIs*(info.IPv4PerENI-1) + 2; info.MaxPodsENI != want {
			t.Errorf("%s: max_pods_eni %d, but %d ENIs x (%d IPv4 - 1) + 2 = %d", info.Name, info.MaxPodsENI, info.MaxENIs, info.IPv4PerENI, want)
		}
	}
}

// TestBuiltinSpotChecks compares rows with the spot checks data/README.md lists.
func TestBuiltinSpotChecks(t *testing.T) {
	byName := builtinByName()
	for _, tc := range []struct {
		name                  string
		vcpu, memMiB, gpus    int64
		gpuName               string
		gpuMemMiB, nvmeGiB    int64
		pods                  int64
		price                 float64
		gpuManufacturer, arch string
	}{
		{name: "m6i.large", vcpu: 2, memMiB: 8192, pods: 29, price: 0.096, arch: "amd64"},
		{name: "g5.12xlarge", vcpu: 48, memMiB: 196608, gpus: 4, gpuName: "a10g", gpuManufacturer: "nvidia", gpuMemMiB: 22888, nvmeGiB: 3800, pods: 737, price: 5.672, arch: "amd64"},
		{name: "p5.48xlarge", vcpu: 192, memMiB: 2097152, gpus: 8, gpuName: "h100", gpuManufacturer: "nvidia", gpuMemMiB: 81920, nvmeGiB: 30400, pods: 100, price: 55.04, arch: "amd64"},
	} {
		info, ok := byName[tc.name]
		if !ok {
			t.Errorf("%s is missing", tc.name)
			continue
		}
		if info.VCPU != tc.vcpu || info.MemoryMiB != tc.memMiB || info.GPUCount != tc.gpus || info.GPUName != tc.gpuName ||
			info.GPUManufacturer != tc.gpuManufacturer || info.GPUMemoryMiB != tc.gpuMemMiB || info.LocalNVMeGiB != tc.nvmeGiB ||
			info.MaxPodsENI != tc.pods || info.OnDemandPrice != tc.price || info.Arch != tc.arch {
			t.Errorf("%s = %+v, want %+v", tc.name, info, tc)
		}
	}
}

func builtinByName() map[string]catalogue.Info {
	out := map[string]catalogue.Info{}
	for _, info := range catalogue.Builtin() {
		out[info.Name] = info
	}
	return out
}
