package nodeboot_test

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/internal/nodeboot"
)

const cluster = "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    name: c\n    apiServerEndpoint: https://api\n" +
	"    certificateAuthority: Q0E=\n    cidr: %s\n"

func read(t *testing.T, family, doc string) *nodeboot.UserData {
	t.Helper()
	ud, err := nodeboot.Read(family, []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return ud
}

// m6iLarge is an m6i.large as EC2 describes it (2 vCPU, 8192 MiB, 3 ENIs of 10 addresses).
var m6iLarge = nodeboot.Instance{ID: "i-1", Type: "m6i.large", Zone: "us-east-1a", Region: "us-east-1", Arch: "amd64",
	VCPU: 2, MemoryMiB: 8192, MaxENIs: 3, IPv4PerENI: 10}

func quantity(rl corev1.ResourceList, name corev1.ResourceName) string {
	q := rl[name]
	return q.String()
}

// TestBottlerocketRendersItsSettings: max-pods, kube-reserved key by key
// (memory from max-pods), system-reserved, eviction-hard alone, the cluster
// DNS, labels and taints, worked by hand for an m6i.large.
func TestBottlerocketRendersItsSettings(t *testing.T) {
	ud := read(t, nodeboot.Bottlerocket, `[settings.kubernetes]
max-pods = 110
cluster-dns-ip = ["169.254.20.10", "10.100.0.10"]
[settings.kubernetes.kube-reserved]
cpu = "200m"
[settings.kubernetes.system-reserved]
memory = "100Mi"
[settings.kubernetes.eviction-hard]
"memory.available" = "200Mi"
[settings.kubernetes.node-labels]
team = "web"
[settings.kubernetes.node-taints]
gpu = ["true:NoSchedule", ":NoExecute"]
`)
	node, k, err := ud.Boot("n", m6iLarge)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(k.Config.ClusterDNS, []string{"169.254.20.10", "10.100.0.10"}) || node.Labels["team"] != "web" || len(node.Spec.Taints) != 2 {
		t.Errorf("dns %v labels %v taints %v", k.Config.ClusterDNS, node.Labels, node.Spec.Taints)
	}
	// capacity 7577Mi; kube-reserved 11 × 110 + 255 = 1465Mi; system 100Mi; eviction 200Mi: 5812Mi.
	// ephemeral: 20Gi, 1Gi kube-reserved, and no nodefs threshold (Bottlerocket's eviction-hard has none).
	for name, want := range map[corev1.ResourceName]string{corev1.ResourceCPU: "1800m", corev1.ResourceMemory: "5812Mi",
		corev1.ResourcePods: "110", corev1.ResourceEphemeralStorage: "19Gi"} {
		if got := quantity(node.Status.Allocatable, name); got != want {
			t.Errorf("allocatable %s = %s, want %s", name, got, want)
		}
	}
}

// TestNodeadmMergesTheDropInAsTheKubeletDoes: the user data's evictionHard
// keeps nodeadm's other thresholds, podsPerCore caps the pods but not the
// kube-reserved memory, a --register-with-taints flag is over the config's,
// and an IPv6 CIDR gives nodeadm's IPv6 cluster DNS.
func TestNodeadmMergesTheDropInAsTheKubeletDoes(t *testing.T) {
	doc := strings.Replace(cluster, "%s", "fd00:10:96::/108", 1) + "  kubelet:\n    config:\n      podsPerCore: 5\n" +
		"      evictionHard: {memory.available: 300Mi}\n      registerWithTaints: [{key: a, effect: NoSchedule}]\n" +
		"    flags: [\"--node-labels=a=b\", \"--node-labels=a=c,d=e\", \"--register-with-taints=x=y:NoExecute\"]\n"
	node, k, err := read(t, nodeboot.AL2023, doc).Boot("n", m6iLarge)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(k.Config.ClusterDNS, []string{"fd00:10:96::a"}) || k.Config.EvictionHard["nodefs.available"] != "10%" {
		t.Errorf("dns %v eviction %v", k.Config.ClusterDNS, k.Config.EvictionHard)
	}
	if node.Labels["a"] != "c" || node.Labels["d"] != "e" || len(node.Spec.Taints) != 1 || node.Spec.Taints[0].Key != "x" {
		t.Errorf("labels %v taints %v", node.Labels, node.Spec.Taints)
	}
	// pods min(29, 5 × 2) = 10; memory 7577 − (11 × 29 + 255 = 574) − 300 = 6703Mi.
	if p, m := quantity(node.Status.Allocatable, corev1.ResourcePods), quantity(node.Status.Allocatable, corev1.ResourceMemory); p != "10" || m != "6703Mi" {
		t.Errorf("pods %s memory %s, want 10 and 6703Mi", p, m)
	}
}

// TestEphemeralStorageIsTheVolumeTheKubeletUses: the family's device from
// the block device mapping, the image's 20 GiB without one, the instance
// store with RAID0 (decimal gigabytes).
func TestEphemeralStorageIsTheVolumeTheKubeletUses(t *testing.T) {
	vols := []nodeboot.Volume{{Device: "/dev/xvda", SizeGiB: 4}, {Device: "/dev/xvdb", SizeGiB: 80}}
	al := read(t, nodeboot.AL2023, strings.Replace(cluster, "%s", "10.100.0.0/16", 1))
	raid := read(t, nodeboot.AL2023, strings.Replace(cluster, "%s", "10.100.0.0/16", 1)+"  instance:\n    localStorage:\n      strategy: RAID0\n")
	br := read(t, nodeboot.Bottlerocket, "[settings.bootstrap-commands.k8s-ephemeral-storage]\ncommands = [[\"apiclient\", \"ephemeral-storage\", \"init\"]]\n")
	for name, tc := range map[string]struct {
		ud      *nodeboot.UserData
		volumes []nodeboot.Volume
		want    int64
	}{
		"al2023 root":                 {al, vols, 4 << 30},
		"al2023 default":              {al, nil, 20 << 30},
		"al2023 raid0":                {raid, vols, 250_000_000_000},
		"bottlerocket raid0":          {br, vols, 250_000_000_000},
		"bottlerocket data, no store": {read(t, nodeboot.Bottlerocket, ""), vols, 80 << 30},
	} {
		if got := tc.ud.EphemeralBytes(tc.volumes, 250); got != tc.want {
			t.Errorf("%s: %d bytes, want %d", name, got, tc.want)
		}
	}
}

// TestMaxPodsFollowsNodeadm: the table, EC2's answer for a type the table
// lacks, 110 without either; a failing expression keeps the standard value.
func TestMaxPodsFollowsNodeadm(t *testing.T) {
	for _, tc := range []struct {
		typ, expr string
		eni       *nodeboot.ENIInfo
		want      int64
	}{
		{"m4.xlarge", "", nil, 58},
		{"m4.xlarge", "max_pods * 2", nil, 116},
		{"m4.xlarge", "unknown_var + 1", nil, 58},
		{"m4.xlarge", "0", nil, 58},
		{"future.large", "", &nodeboot.ENIInfo{DefaultMaxENIs: 3, IPv4PerInterface: 10}, 29},
		{"future.large", "", nil, 110},
	} {
		if got := nodeboot.BaseMaxPods(tc.typ, tc.eni, tc.expr); got != tc.want {
			t.Errorf("%s %q: %d, want %d", tc.typ, tc.expr, got, tc.want)
		}
	}
}

// TestAKubeletConfigTheKubeletRefusesRegistersNothing: a field in the wrong
// case is unknown to the kubelet's strict decoder.
func TestAKubeletConfigTheKubeletRefusesRegistersNothing(t *testing.T) {
	doc := strings.Replace(cluster, "%s", "10.100.0.0/16", 1) + "  kubelet:\n    config:\n      maxpods: 5\n"
	if _, _, err := read(t, nodeboot.AL2023, doc).Boot("n", m6iLarge); err == nil || !strings.Contains(err.Error(), "maxpods") {
		t.Errorf("error %v, want the kubelet refusing maxpods", err)
	}
}
