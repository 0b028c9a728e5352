package amifamily_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
	sigsjson "sigs.k8s.io/json"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/amifamily"
	"github.com/stowage-dev/stowage/internal/nodeboot"
	"github.com/stowage-dev/stowage/internal/userdatacheck"
)

var cluster = amifamily.Cluster{Name: "prod", Endpoint: "https://api", CABundle: "Q0E=", CIDR: "10.100.0.0/16"}

// render renders and reads back the user data as a node of the family does,
// checking every NodeConfig against nodeadm's schema.
func render(t *testing.T, family string, b amifamily.Bootstrap) (amifamily.Rendered, *nodeboot.UserData) {
	t.Helper()
	r, err := amifamily.Render(family, b)
	if err != nil {
		t.Fatalf("rendering: %v", err)
	}
	again, err := amifamily.Render(family, b)
	if err != nil || again.Text != r.Text {
		t.Errorf("the same bootstrap renders differently: %v", err)
	}
	ud, err := userdatacheck.Check(family, base64.StdEncoding.EncodeToString([]byte(r.Text)))
	if err != nil {
		t.Fatalf("a node would not read the user data: %v\n%s", err, r.Text)
	}
	return r, ud
}

// kubeletConfig decodes the merged NodeConfig's kubelet config into the
// kubelet's own type as the kubelet's strict decoder does: a field the
// kubelet does not know, or a name in the wrong case, fails.
func kubeletConfig(t *testing.T, ud *nodeboot.UserData) kubeletv1beta1.KubeletConfiguration {
	t.Helper()
	raw, _ := json.Marshal(ud.NodeConfig.Spec.Kubelet.Config)
	var k kubeletv1beta1.KubeletConfiguration
	strict, err := sigsjson.UnmarshalStrict(raw, &k)
	if err = errors.Join(append(strict, err)...); err != nil {
		t.Fatalf("the kubelet config is not the kubelet's: %v\n%s", err, raw)
	}
	return k
}

func fullBootstrap() amifamily.Bootstrap {
	return amifamily.Bootstrap{
		Cluster: cluster, InstanceStoreRAID0: true,
		Kubelet: &v1alpha1.KubeletConfiguration{MaxPods: ptr.To[int32](58), PodsPerCore: ptr.To[int32](4),
			KubeReserved: map[string]string{"cpu": "100m"}, SystemReserved: map[string]string{"memory": "200Mi"},
			EvictionHard: map[string]string{"memory.available": "300Mi"}, ClusterDNS: []string{"169.254.20.10"},
			ImageGCHighThresholdPercent: ptr.To[int32](85), ImageGCLowThresholdPercent: ptr.To[int32](80),
			EvictionMaxPodGracePeriod: ptr.To[int32](60), CPUCFSQuota: ptr.To(false),
			EvictionSoft:            map[string]string{"memory.available": "500Mi"},
			EvictionSoftGracePeriod: map[string]metav1.Duration{"memory.available": {Duration: 90 * time.Second}}},
		Labels: map[string]string{"stowage.dev/nodepool": "gpu", "team": "ml"},
		Taints: []corev1.Taint{{Key: "nvidia.com/gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}},
	}
}

// TestAL2023UserDataIsANodeConfigNodeadmReads: the cluster, RAID0, the
// labels, the taints and every kubelet setting reach the NodeConfig under
// nodeadm's and the kubelet's field names, read back by a MIME reader, the
// schema and the kubelet's own type.
func TestAL2023UserDataIsANodeConfigNodeadmReads(t *testing.T) {
	_, ud := render(t, amifamily.FamilyAL2023, fullBootstrap())
	c := ud.NodeConfig.Spec
	if c.Cluster.Name != "prod" || c.Cluster.APIServerEndpoint != "https://api" || string(c.Cluster.CertificateAuthority) != "CA" ||
		c.Cluster.CIDR != "10.100.0.0/16" || c.Instance.LocalStorage.Strategy != "RAID0" {
		t.Errorf("cluster or instance: %+v", c)
	}
	if !slices.Equal(c.Kubelet.Flags, []string{"--node-labels=stowage.dev/nodepool=gpu,team=ml"}) {
		t.Errorf("flags %q", c.Kubelet.Flags)
	}
	k := kubeletConfig(t, ud)
	want := kubeletv1beta1.KubeletConfiguration{MaxPods: 58, PodsPerCore: 4, ClusterDNS: []string{"169.254.20.10"},
		KubeReserved: map[string]string{"cpu": "100m"}, SystemReserved: map[string]string{"memory": "200Mi"},
		EvictionHard: map[string]string{"memory.available": "300Mi"}, EvictionSoft: map[string]string{"memory.available": "500Mi"},
		EvictionSoftGracePeriod: map[string]string{"memory.available": "1m30s"}, EvictionMaxPodGracePeriod: 60,
		ImageGCHighThresholdPercent: ptr.To[int32](85), ImageGCLowThresholdPercent: ptr.To[int32](80), CPUCFSQuota: ptr.To(false),
		RegisterWithTaints: []corev1.Taint{{Key: "nvidia.com/gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}}}
	if !reflect.DeepEqual(k, want) {
		t.Errorf("kubelet config\n got %+v\nwant %+v", k, want)
	}
}

// TestAL2023KeepsTheNodeClassPartsBeforeItsOwn: a NodeClass's MIME parts
// (a NodeConfig and a script, as Karpenter's AL2023 example writes them,
// with or without the closing boundary), a NodeConfig on its own and a plain
// script are kept, before Stowage's NodeConfig, which nodeadm merges last.
func TestAL2023KeepsTheNodeClassPartsBeforeItsOwn(t *testing.T) {
	mimeData := "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"BOUNDARY\"\n\n--BOUNDARY\nContent-Type: application/node.eks.aws\n\n" +
		"apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  instance:\n    localStorage:\n      strategy: Mount\n\n" +
		"--BOUNDARY\nContent-Type: text/x-shellscript; charset=\"us-ascii\"\n\n#!/bin/bash\necho hello\n\n--BOUNDARY"
	nodeConfig := "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  instance:\n    localStorage:\n      strategy: Mount\n"
	for name, tc := range map[string]struct {
		data         string
		nodeConfigs  int
		scripts      []string
		wantStrategy string
	}{
		"mime, closed":     {mimeData + "--\n", 2, []string{"#!/bin/bash\necho hello\n"}, "Mount"},
		"mime, not closed": {mimeData + "\n", 2, []string{"#!/bin/bash\necho hello\n"}, "Mount"},
		"a NodeConfig":     {nodeConfig, 2, nil, "Mount"},
		"a script":         {"#!/bin/bash\necho plain", 1, []string{"#!/bin/bash\necho plain"}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			_, ud := render(t, amifamily.FamilyAL2023, amifamily.Bootstrap{Cluster: cluster, CustomData: &tc.data})
			if len(ud.Documents) != tc.nodeConfigs || !slices.Equal(ud.Scripts, tc.scripts) {
				t.Errorf("%d NodeConfigs and scripts %q, want %d and %q", len(ud.Documents), ud.Scripts, tc.nodeConfigs, tc.scripts)
			}
			if got := ud.NodeConfig.Spec.Instance.LocalStorage.Strategy; got != tc.wantStrategy || ud.NodeConfig.Spec.Cluster.Name != "prod" {
				t.Errorf("merged: strategy %q (want %q), cluster %q", got, tc.wantStrategy, ud.NodeConfig.Spec.Cluster.Name)
			}
		})
	}
}

// TestAL2023NodeClassSettingsGiveWayToStowages: a NodeConfig in the
// NodeClass's userData that sets the cluster, a kubelet setting of the
// kubelet block or a pool's label loses to Stowage's, which nodeadm merges
// last, and Render names each; its other settings stay.
func TestAL2023NodeClassSettingsGiveWayToStowages(t *testing.T) {
	data := "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    name: other\n  kubelet:\n" +
		"    config:\n      maxPods: 20\n      registryPullQPS: 20\n      kubeReserved: {memory: 1Gi}\n    flags: [\"--node-labels=team=web,zone=a\"]\n"
	b := amifamily.Bootstrap{Cluster: cluster, CustomData: &data, Labels: map[string]string{"team": "ml"},
		Kubelet: &v1alpha1.KubeletConfiguration{MaxPods: ptr.To[int32](30), KubeReserved: map[string]string{"cpu": "1"}}}
	r, ud := render(t, amifamily.FamilyAL2023, b)
	want := []string{"--node-labels team", "spec.cluster.name", "spec.kubelet.config.maxPods"}
	if !slices.Equal(r.Replaced, want) {
		t.Errorf("replaced %q, want %q", r.Replaced, want)
	}
	k := kubeletConfig(t, ud)
	if ud.NodeConfig.Spec.Cluster.Name != "prod" || k.MaxPods != 30 || k.RegistryPullQPS == nil || *k.RegistryPullQPS != 20 ||
		!reflect.DeepEqual(k.KubeReserved, map[string]string{"cpu": "1", "memory": "1Gi"}) {
		t.Errorf("merged: cluster %q, kubelet %+v", ud.NodeConfig.Spec.Cluster.Name, k)
	}
}

// TestBottlerocketMergesTheNodeClassTOML: Karpenter's own example
// (br-custom-userdata.yaml: [settings.kubernetes] kube-api-qps = 30) and
// a document setting what Stowage sets become one TOML document, each
// table once, the user's values kept where Stowage sets none, Stowage's
// cluster, labels, taints and kubelet block over the rest, each
// replacement named.
func TestBottlerocketMergesTheNodeClassTOML(t *testing.T) {
	data := "[settings.kubernetes]\nkube-api-qps = 30\ncluster-name = \"other\"\nmax-pods = 10\n\n[settings.kubernetes.node-labels]\n" +
		"team = \"web\"\nowner = \"sre\"\n\n[settings.motd]\ntext = \"bell \\u0007 and \\\\x00\"\n"
	b := fullBootstrap()
	b.CustomData = &data
	r, ud := render(t, amifamily.FamilyBottlerocket, b)
	k := ud.Settings["settings"].(map[string]any)["kubernetes"].(map[string]any)
	for key, want := range map[string]any{"kube-api-qps": int64(30), "cluster-name": "prod", "api-server": "https://api",
		"cluster-certificate": "Q0E=", "max-pods": int64(58), "cluster-dns-ip": "169.254.20.10", "cpu-cfs-quota-enforced": false,
		"image-gc-high-threshold-percent": int64(85), "eviction-max-pod-grace-period": int64(60),
		"node-labels":   map[string]any{"team": "ml", "owner": "sre", "stowage.dev/nodepool": "gpu"},
		"node-taints":   map[string]any{"nvidia.com/gpu": []any{"true:NoSchedule"}},
		"kube-reserved": map[string]any{"cpu": "100m"}, "eviction-soft-grace-period": map[string]any{"memory.available": "1m30s"}} {
		if !reflect.DeepEqual(k[key], want) {
			t.Errorf("settings.kubernetes.%s = %#v, want %#v", key, k[key], want)
		}
	}
	if motd := ud.Settings["settings"].(map[string]any)["motd"].(map[string]any)["text"]; motd != "bell \a and \\x00" {
		t.Errorf("the user's string came back as %q", motd)
	}
	want := []string{"settings.kubernetes.cluster-name", "settings.kubernetes.max-pods", "settings.kubernetes.node-labels.team"}
	if !slices.Equal(r.Replaced, want) {
		t.Errorf("replaced %q, want %q", r.Replaced, want)
	}
}

// TestBottlerocketRefusesUserDataThatIsNotTOML names spec.userData.
func TestBottlerocketRefusesUserDataThatIsNotTOML(t *testing.T) {
	for _, data := range []string{"[settings.kubernetes]\n[settings.kubernetes]\n", "#!/bin/bash\necho hi"} {
		_, err := amifamily.Render(amifamily.FamilyBottlerocket, amifamily.Bootstrap{Cluster: cluster, CustomData: &data})
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte("spec.userData is not TOML")) {
			t.Errorf("%q: error %v, want one naming spec.userData", data, err)
		}
	}
}

// TestClusterDNSFollowsNodeadmsRule: IPv4 and IPv6 service CIDRs, as
// nodeadm derives the DNS address and Bottlerocket's cluster-dns-ip gets it.
func TestClusterDNSFollowsNodeadmsRule(t *testing.T) {
	for cidr, want := range map[string]string{"10.100.0.0/16": "10.100.0.10", "172.20.0.0/16": "172.20.0.10",
		"10.0.0.0/24": "10.0.0.10", "fd00:10:96::/112": "fd00:10:96::a"} {
		got, err := amifamily.ClusterDNS(cidr)
		if err != nil || got != want {
			t.Errorf("ClusterDNS(%s) = %s, %v; want %s", cidr, got, err, want)
		}
		c := cluster
		c.CIDR = cidr
		_, ud := render(t, amifamily.FamilyBottlerocket, amifamily.Bootstrap{Cluster: c})
		if ip := ud.Settings["settings"].(map[string]any)["kubernetes"].(map[string]any)["cluster-dns-ip"]; ip != want {
			t.Errorf("%s: cluster-dns-ip %v, want %s", cidr, ip, want)
		}
	}
	if _, err := amifamily.ClusterDNS("10.100.0.0"); err == nil {
		t.Error("ClusterDNS accepted an address without a prefix length")
	}
}

// TestCustomUserDataIsAsGiven: a custom family's user data is the
// NodeClass's, byte for byte, and nothing without it.
func TestCustomUserDataIsAsGiven(t *testing.T) {
	data := "#!/bin/bash\n/etc/eks/bootstrap.sh prod\n"
	for _, tc := range []struct {
		custom *string
		want   string
	}{{&data, data}, {nil, ""}} {
		r, err := amifamily.Render(amifamily.FamilyCustom, amifamily.Bootstrap{Cluster: cluster, CustomData: tc.custom, Kubelet: fullBootstrap().Kubelet})
		if err != nil || r.Text != tc.want || len(r.Replaced) > 0 {
			t.Errorf("custom: %q, %v, %v; want %q", r.Text, r.Replaced, err, tc.want)
		}
	}
}

// TestFamilyFollowsAMIFamily: amiFamily names the bootstrap of images
// selected by id; without it an alias's family counts, else custom.
func TestFamilyFollowsAMIFamily(t *testing.T) {
	br := "Bottlerocket"
	for _, tc := range []struct {
		spec v1alpha1.NodeClassSpec
		want string
	}{
		{v1alpha1.NodeClassSpec{AMISelectorTerms: []v1alpha1.AMISelectorTerm{{ID: "ami-1"}}, AMIFamily: &br}, amifamily.FamilyBottlerocket},
		{v1alpha1.NodeClassSpec{AMISelectorTerms: []v1alpha1.AMISelectorTerm{{Alias: "al2023@latest"}}}, amifamily.FamilyAL2023},
		{v1alpha1.NodeClassSpec{AMISelectorTerms: []v1alpha1.AMISelectorTerm{{ID: "ami-1"}}}, amifamily.FamilyCustom},
	} {
		if got := amifamily.Family(&v1alpha1.NodeClass{Spec: tc.spec}); got != tc.want {
			t.Errorf("%+v: family %s, want %s", tc.spec, got, tc.want)
		}
	}
}
