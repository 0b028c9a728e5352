package catalogue_test

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

const (
	mib = int64(1) << 20
	gib = int64(1) << 30
)

// build makes one catalogue type with the default options and the given kubelet settings.
func build(t *testing.T, name string, kubelet *v1alpha1.KubeletConfiguration) *cloudprovider.InstanceType {
	t.Helper()
	info, ok := builtinByName()[name]
	if !ok {
		t.Fatalf("%s is not in the built-in catalogue", name)
	}
	opts := catalogue.DefaultOptions()
	opts.Kubelet = kubelet
	return catalogue.InstanceTypes([]catalogue.Info{info}, opts)[0]
}

// TestMaxPodsByENI checks the ENI limits of the data and the pod counts worked out
// by hand from them with max_enis * (ipv4_per_eni - 1) + 2.
func TestMaxPodsByENI(t *testing.T) {
	for _, tc := range []struct {
		name       string
		enis, ipv4 int64
		want       int64
	}{
		{"t3.nano", 2, 2, 4},          // 2*1+2
		{"t3.small", 3, 4, 11},        // 3*3+2
		{"m6i.large", 3, 10, 29},      // 3*9+2
		{"c6i.xlarge", 4, 15, 58},     // 4*14+2
		{"c6i.4xlarge", 8, 30, 234},   // 8*29+2
		{"c6i.24xlarge", 15, 50, 737}, // 15*49+2, the m5.24xlarge shape
		{"g5.48xlarge", 7, 50, 345},   // 7*49+2
		{"g6e.12xlarge", 10, 30, 292}, // 10*29+2
		{"trn1.32xlarge", 5, 50, 247}, // default network card only: 5*49+2
		{"p5.48xlarge", 2, 50, 100},   // 2*49+2
	} {
		t.Run(tc.name, func(t *testing.T) {
			info := builtinByName()[tc.name]
			if info.MaxENIs != tc.enis || info.IPv4PerENI != tc.ipv4 {
				t.Fatalf("%s has %d ENIs x %d IPv4, want %d x %d", tc.name, info.MaxENIs, info.IPv4PerENI, tc.enis, tc.ipv4)
			}
			if got := catalogue.MaxPods(info, catalogue.Options{}); got != tc.want {
				t.Errorf("MaxPods = %d, want %d", got, tc.want)
			}
			if got := build(t, tc.name, nil).Capacity.Pods; got != tc.want {
				t.Errorf("capacity pods = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestKubeletOverridesMaxPods: maxPods and podsPerCore set the pods a node
// takes; kube-reserved memory follows nodeadm's own max pods (the ENI
// formula), whatever the kubelet then runs with (nodeadm's
// kubelet-config-max-pods case: 915Mi for 60 pods where maxPods is 1). On
// Bottlerocket, podsPerCore does nothing and kube-reserved memory follows
// the max-pods setting.
func TestKubeletOverridesMaxPods(t *testing.T) {
	for _, tc := range []struct {
		name         string
		typ          string
		maxPods      *int32
		podsPerCore  *int32
		bottlerocket bool
		want         int64
		reservedFor  int64
	}{
		{"no override keeps the ENI limit", "m6i.large", nil, nil, false, 29, 29},
		{"maxPods replaces the ENI limit upwards", "m6i.large", ptr.To[int32](110), nil, false, 110, 29},
		{"maxPods replaces the ENI limit downwards", "c6i.24xlarge", ptr.To[int32](250), nil, false, 250, 737},
		{"podsPerCore caps the ENI limit", "m6i.large", nil, ptr.To[int32](10), false, 20, 29}, // min(29, 10*2)
		{"podsPerCore above the ENI limit changes nothing", "m6i.large", nil, ptr.To[int32](100), false, 29, 29},
		{"podsPerCore caps maxPods", "c6i.xlarge", ptr.To[int32](110), ptr.To[int32](5), false, 20, 58},         // min(110, 5*4)
		{"maxPods below podsPerCore wins", "c6i.24xlarge", ptr.To[int32](50), ptr.To[int32](5), false, 50, 737}, // min(50, 5*96)
		{"podsPerCore 0 means no cap", "m6i.large", nil, ptr.To[int32](0), false, 29, 29},
		{"Bottlerocket reserves for its max-pods", "c6i.24xlarge", ptr.To[int32](250), nil, true, 250, 250},
		{"Bottlerocket has no podsPerCore", "m6i.large", nil, ptr.To[int32](10), true, 29, 29},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := catalogue.DefaultOptions()
			opts.Kubelet, opts.Bottlerocket = &v1alpha1.KubeletConfiguration{MaxPods: tc.maxPods, PodsPerCore: tc.podsPerCore}, tc.bottlerocket
			it := catalogue.InstanceTypes([]catalogue.Info{builtinByName()[tc.typ]}, opts)[0]
			if it.Capacity.Pods != tc.want {
				t.Errorf("capacity pods = %d, want %d", it.Capacity.Pods, tc.want)
			}
			if want := (11*tc.reservedFor + 255) * mib; it.Overhead.KubeReserved.Memory != want {
				t.Errorf("kube-reserved memory = %d MiB, want 11*%d+255 = %d MiB", it.Overhead.KubeReserved.Memory/mib, tc.reservedFor, want/mib)
			}
		})
	}
}

// TestKubeReservedCPU checks values worked out by hand from the EKS rule: 6% of the
// first core, 1% of the second, 0.5% of the third and fourth, 0.25% of the rest.
func TestKubeReservedCPU(t *testing.T) {
	for _, tc := range []struct{ vcpu, want int64 }{
		{1, 60},   // 60
		{2, 70},   // 60+10
		{3, 75},   // 60+10+5
		{4, 80},   // 60+10+5+5
		{5, 82},   // 80+2.5, the half millicore dropped as Karpenter's int64() does
		{8, 90},   // 80+4*2.5
		{16, 110}, // 80+12*2.5
		{32, 150}, // 80+28*2.5
		{48, 190}, // 80+44*2.5
		{64, 230}, // 80+60*2.5
		{96, 310}, // 80+92*2.5
		{128, 390},
		{192, 550}, // 80+188*2.5
	} {
		if got := catalogue.KubeReservedCPU(tc.vcpu); got != tc.want {
			t.Errorf("KubeReservedCPU(%d) = %dm, want %dm", tc.vcpu, got, tc.want)
		}
	}
}

// TestNodeCapacityAndOverhead checks each documented formula on real types, with
// expected values worked out by hand in the comments.
func TestNodeCapacityAndOverhead(t *testing.T) {
	for _, tc := range []struct {
		name string
		// capacity memory: instance MiB less 7.5%, the overhead rounded up to a whole MiB
		memMiB  int64
		pods    int64
		kubeCPU int64
		// kube-reserved memory: 11 MiB per pod + 255 MiB
		kubeMemMiB int64
		extended   map[string]int64
	}{
		{"t3.nano", 512 - 39, 4, 70, 11*4 + 255, nil},                 // 512*0.075 = 38.4
		{"m6i.large", 8192 - 615, 29, 70, 574, nil},                   // 614.4
		{"c6i.xlarge", 8192 - 615, 58, 80, 11*58 + 255, nil},          // 893 MiB
		{"r6i.large", 16384 - 1229, 29, 70, 574, nil},                 // 1228.8
		{"m7g.medium", 4096 - 308, 8, 60, 11*8 + 255, nil},            // 307.2; 1 vCPU
		{"c6i.12xlarge", 98304 - 7373, 234, 190, 11*234 + 255, nil},   // 7372.8
		{"c6i.24xlarge", 196608 - 14746, 737, 310, 11*737 + 255, nil}, // 14745.6; 8362 MiB
		{"g5.12xlarge", 196608 - 14746, 737, 190, 8362, map[string]int64{"nvidia.com/gpu": 4}},
		{"p5.48xlarge", 2097152 - 157287, 100, 550, 1355, map[string]int64{"nvidia.com/gpu": 8}},                 // 157286.4
		{"inf2.24xlarge", 393216 - 29492, 737, 310, 8362, map[string]int64{"aws.amazon.com/neuron": 6}},          // 29491.2
		{"trn1.32xlarge", 524288 - 39322, 247, 390, 11*247 + 255, map[string]int64{"aws.amazon.com/neuron": 16}}, // 39321.6
	} {
		t.Run(tc.name, func(t *testing.T) {
			it := build(t, tc.name, nil)
			info := builtinByName()[tc.name]
			wantCap := scheduling.Resources{CPU: info.VCPU * 1000, Memory: tc.memMiB * mib, EphemeralStorage: 20 * gib, Pods: tc.pods}
			for name, v := range tc.extended {
				wantCap.Set(corev1.ResourceName(name), v)
			}
			if !equalResources(it.Capacity, wantCap) {
				t.Errorf("capacity = %+v, want %+v", it.Capacity, wantCap)
			}
			want := cloudprovider.Overhead{
				KubeReserved: scheduling.Resources{CPU: tc.kubeCPU, Memory: tc.kubeMemMiB * mib, EphemeralStorage: gib},
				// 100Mi; 10% of 20 GiB, the 10% a float32 as the kubelet parses it: 32 bytes over 2 GiB
				EvictionThreshold: scheduling.Resources{Memory: 100 * mib, EphemeralStorage: 2*gib + 32},
			}
			if !equalResources(it.Overhead.KubeReserved, want.KubeReserved) || !equalResources(it.Overhead.EvictionThreshold, want.EvictionThreshold) ||
				!it.Overhead.SystemReserved.IsZero() {
				t.Errorf("overhead = %+v, want %+v", it.Overhead, want)
			}
		})
	}
}

// TestDocumentedExample is the m6i.large example of docs/guides/capacity.md.
func TestDocumentedExample(t *testing.T) {
	it := build(t, "m6i.large", nil)
	a := it.Allocatable()
	if a.CPU != 1930 || a.Memory != 6903*mib || a.Pods != 29 {
		t.Errorf("m6i.large allocatable = %dm cpu, %d bytes (%.2f MiB), %d pods; docs/guides/capacity.md says 1930m, 6903 MiB, 29",
			a.CPU, a.Memory, float64(a.Memory)/float64(mib), a.Pods)
	}
	if it.Capacity.Memory != 7577*mib {
		t.Errorf("m6i.large memory capacity = %.2f MiB; docs/guides/capacity.md says 7577 MiB", float64(it.Capacity.Memory)/float64(mib))
	}
}

func TestKubeletReservationsAndEvictionOverrides(t *testing.T) {
	kubelet := &v1alpha1.KubeletConfiguration{
		KubeReserved:   map[string]string{"cpu": "250m", "memory": "1Gi", "ephemeral-storage": "3Gi", "pid": "1000"},
		SystemReserved: map[string]string{"cpu": "100m", "memory": "512Mi"},
		EvictionHard:   map[string]string{"memory.available": "200Mi", "nodefs.available": "15%"},
	}
	it := build(t, "m6i.large", kubelet)
	want := cloudprovider.Overhead{
		KubeReserved:      scheduling.Resources{CPU: 250, Memory: gib, EphemeralStorage: 3 * gib},
		SystemReserved:    scheduling.Resources{CPU: 100, Memory: 512 * mib},
		EvictionThreshold: scheduling.Resources{Memory: 200 * mib, EphemeralStorage: 3221225600}, // 15% (a float32) of 20 GiB
	}
	if !equalResources(it.Overhead.KubeReserved, want.KubeReserved) || !equalResources(it.Overhead.SystemReserved, want.SystemReserved) ||
		!equalResources(it.Overhead.EvictionThreshold, want.EvictionThreshold) {
		t.Errorf("overhead = %+v, want %+v", it.Overhead, want)
	}
	// 2000m - 250m - 100m; 7577 MiB - 1024 - 512 - 200.
	if a := it.Allocatable(); a.CPU != 1650 || a.Memory != (7577-1024-512-200)*mib {
		t.Errorf("allocatable = %dm, %d MiB; want 1650m, %d MiB", a.CPU, a.Memory/mib, 7577-1024-512-200)
	}
	// Overrides leave the formula's other resources alone.
	partial := build(t, "m6i.large", &v1alpha1.KubeletConfiguration{KubeReserved: map[string]string{"cpu": "1"}})
	if k := partial.Overhead.KubeReserved; k.CPU != 1000 || k.Memory != 574*mib || k.EphemeralStorage != gib {
		t.Errorf("kube-reserved with only cpu overridden = %+v, want 1000m, 574 MiB, 1 GiB", k)
	}
}

func TestRootVolumeSizesEphemeralStorage(t *testing.T) {
	info := builtinByName()["m6i.large"]
	opts := catalogue.DefaultOptions()
	opts.RootVolumeGiB = 200
	it := catalogue.InstanceTypes([]catalogue.Info{info}, opts)[0]
	// 10% of 200 GiB with the kubelet's float32 10% is 21,474,836,800 bytes (320 over 20 GiB).
	if it.Capacity.EphemeralStorage != 200*gib || it.Overhead.EvictionThreshold.EphemeralStorage != 21_474_836_800 {
		t.Errorf("200 GiB root volume: ephemeral storage %d GiB, nodefs eviction %d bytes; want 200 GiB and 10%% (21474836800)",
			it.Capacity.EphemeralStorage/gib, it.Overhead.EvictionThreshold.EphemeralStorage)
	}
	if a := it.Allocatable().EphemeralStorage; a != 192_199_786_176 { // 200 GiB - 1 GiB kube-reserved - the eviction threshold
		t.Errorf("allocatable ephemeral storage = %d bytes, want 192199786176", a)
	}
}

// equalResources compares resource vectors, extended resources included.
func equalResources(a, b scheduling.Resources) bool {
	return a.CPU == b.CPU && a.Memory == b.Memory && a.EphemeralStorage == b.EphemeralStorage && a.Pods == b.Pods &&
		slices.Equal(a.Extended, b.Extended)
}

// TestInstanceStoreRAID0SizesEphemeralStorage: with instanceStorePolicy RAID0
// a type with an instance store (g5.xlarge: 250 GB) keeps ephemeral storage
// there; one without (m6i.large) keeps the root volume. Worked by hand:
// 250,000,000,000 bytes less 1 GiB kube-reserved (1,073,741,824) less the
// 10% nodefs eviction threshold (25,000,000,372, the kubelet's 10% being a
// float32) is 223,926,257,804.
func TestInstanceStoreRAID0SizesEphemeralStorage(t *testing.T) {
	opts := catalogue.DefaultOptions()
	opts.InstanceStoreRAID0 = true
	types := catalogue.InstanceTypes([]catalogue.Info{builtinByName()["g5.xlarge"], builtinByName()["m6i.large"]}, opts)
	if g5 := types[0]; g5.Capacity.EphemeralStorage != 250_000_000_000 || g5.Allocatable().EphemeralStorage != 223_926_257_804 {
		t.Errorf("g5.xlarge in RAID0: ephemeral storage %d, allocatable %d; want 250000000000 and 223926257804",
			g5.Capacity.EphemeralStorage, g5.Allocatable().EphemeralStorage)
	}
	if m6i := types[1]; m6i.Capacity.EphemeralStorage != 20*gib {
		t.Errorf("m6i.large (no instance store) in RAID0: ephemeral storage %d, want the 20 GiB root volume", m6i.Capacity.EphemeralStorage)
	}
	opts.InstanceStoreRAID0 = false
	if g5 := catalogue.InstanceTypes([]catalogue.Info{builtinByName()["g5.xlarge"]}, opts)[0]; g5.Capacity.EphemeralStorage != 20*gib {
		t.Errorf("g5.xlarge without RAID0: ephemeral storage %d, want the 20 GiB root volume", g5.Capacity.EphemeralStorage)
	}
}

// TestOnlyHardEvictionThresholdsCount: the kubelet subtracts its hard
// thresholds from allocatable, not its soft ones; on AL2023 a NodeClass's
// evictionHard is laid over nodeadm's key by key (nodefs.available 10 %
// stays), on Bottlerocket it replaces them (no nodefs threshold left).
func TestOnlyHardEvictionThresholdsCount(t *testing.T) {
	k := &v1alpha1.KubeletConfiguration{EvictionHard: map[string]string{"memory.available": "200Mi"},
		EvictionSoft: map[string]string{"memory.available": "500Mi", "nodefs.available": "15%"}}
	for _, tc := range []struct {
		bottlerocket          bool
		memory, ephemeralHard int64
	}{{false, 200 * mib, 2*gib + 32}, {true, 200 * mib, 0}} {
		opts := catalogue.DefaultOptions()
		opts.Kubelet, opts.Bottlerocket = k, tc.bottlerocket
		it := catalogue.InstanceTypes([]catalogue.Info{builtinByName()["m6i.large"]}, opts)[0]
		if e := it.Overhead.EvictionThreshold; e.Memory != tc.memory || e.EphemeralStorage != tc.ephemeralHard {
			t.Errorf("bottlerocket %v: eviction threshold memory %d, ephemeral %d; want %d and %d", tc.bottlerocket, e.Memory, e.EphemeralStorage, tc.memory, tc.ephemeralHard)
		}
		if a := it.Allocatable().Memory; a != 6803*mib { // 7577 capacity - 574 kube-reserved - 200 hard eviction
			t.Errorf("bottlerocket %v: allocatable memory %d MiB, want 6803 MiB", tc.bottlerocket, a/mib)
		}
	}
}
