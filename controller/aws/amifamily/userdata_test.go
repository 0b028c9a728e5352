package amifamily_test

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/amifamily"
)

func TestUserData(t *testing.T) {
	maxPods := int32(58)
	custom := "echo hello"
	b := amifamily.Bootstrap{
		Cluster: amifamily.Cluster{Name: "prod", Endpoint: "https://api", CABundle: "Q0E=", CIDR: "10.100.0.0/16"},
		Kubelet: &v1alpha1.KubeletConfiguration{MaxPods: &maxPods, KubeReserved: map[string]string{"cpu": "100m"}},
		Labels:  map[string]string{"stowage.dev/nodepool": "gpu"},
		Taints:  []corev1.Taint{{Key: "nvidia.com/gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}},
	}
	cases := []struct {
		family string
		custom *string
		want   []string
	}{
		{amifamily.FamilyAL2023, nil, []string{"kind: NodeConfig", "name: prod", "apiServerEndpoint: https://api", "maxPods: 58",
			"cpu: \"100m\"", "--node-labels=stowage.dev/nodepool=gpu", "--register-with-taints=nvidia.com/gpu=true:NoSchedule"}},
		{amifamily.FamilyAL2023, &custom, []string{"text/x-shellscript", "echo hello", "application/node.eks.aws"}},
		{amifamily.FamilyBottlerocket, nil, []string{"[settings.kubernetes]", `cluster-name = "prod"`, "max-pods = 58",
			`"stowage.dev/nodepool" = "gpu"`, `"nvidia.com/gpu" = ["true:NoSchedule"]`, "[settings.kubernetes.kube-reserved]"}},
	}
	for _, tc := range cases {
		t.Run(tc.family, func(t *testing.T) {
			b.CustomData = tc.custom
			raw, err := base64.StdEncoding.DecodeString(amifamily.UserData(tc.family, b))
			if err != nil {
				t.Fatalf("decoding: %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(raw), w) {
					t.Errorf("user data lacks %q:\n%s", w, raw)
				}
			}
		})
	}
}

func decoded(t *testing.T, family string, b amifamily.Bootstrap) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(amifamily.UserData(family, b))
	if err != nil {
		t.Fatalf("decoding: %v", err)
	}
	return string(raw)
}

// TestAL2023MergesMultipartUserData: a NodeClass's MIME multi-part user
// data (a NodeConfig and a script, as Karpenter's AL2023 example writes it)
// keeps its parts, each with its content type, before Stowage's NodeConfig,
// even when its closing boundary is missing; plain text stays one script.
func TestAL2023MergesMultipartUserData(t *testing.T) {
	userData := "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"BOUNDARY\"\n\n--BOUNDARY\nContent-Type: application/node.eks.aws\n\n" +
		"apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  instance:\n    localStorage:\n      strategy: Mount\n\n" +
		"--BOUNDARY\nContent-Type: text/x-shellscript; charset=\"us-ascii\"\n\n#!/bin/bash\necho hello\n\n--BOUNDARY"
	for _, data := range []string{userData + "--\n", userData + "\n"} {
		out := decoded(t, amifamily.FamilyAL2023, amifamily.Bootstrap{CustomData: &data})
		nodeConfig, script, ours := strings.Index(out, "strategy: Mount"), strings.Index(out, "echo hello"), strings.LastIndex(out, "kind: NodeConfig")
		if nodeConfig < 0 || script < 0 || ours < script || strings.Count(out, "Content-Type: application/node.eks.aws") != 2 || strings.Contains(out, "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"BOUNDARY\"") {
			t.Errorf("parts not merged in order:\n%s", out)
		}
	}
	plain := "#!/bin/bash\necho plain"
	out := decoded(t, amifamily.FamilyAL2023, amifamily.Bootstrap{CustomData: &plain})
	if !strings.Contains(out, "Content-Type: text/x-shellscript; charset=\"us-ascii\"\n\n#!/bin/bash\necho plain") {
		t.Errorf("a plain script is not one shell-script part:\n%s", out)
	}
}

// TestInstanceStoreAndKarpentersKubeletSettings: RAID0 and the kubelet
// settings Karpenter exposes reach both families' bootstrap, in a fixed order.
func TestInstanceStoreAndKarpentersKubeletSettings(t *testing.T) {
	hi, lo, grace, quota := int32(85), int32(80), int32(60), false
	b := amifamily.Bootstrap{InstanceStoreRAID0: true, Kubelet: &v1alpha1.KubeletConfiguration{
		ImageGCHighThresholdPercent: &hi, ImageGCLowThresholdPercent: &lo, EvictionMaxPodGracePeriod: &grace, CPUCFSQuota: &quota,
		EvictionSoft:            map[string]string{"memory.available": "500Mi"},
		EvictionSoftGracePeriod: map[string]metav1.Duration{"memory.available": {Duration: 90 * time.Second}}}}
	for family, want := range map[string][]string{
		amifamily.FamilyAL2023: {"localStorage:\n      strategy: RAID0", "imageGCHighThresholdPercent: 85", "imageGCLowThresholdPercent: 80",
			"evictionMaxPodGracePeriod: 60", "cpuCFSQuota: false", "evictionSoft:\n        memory.available: \"500Mi\"", "evictionSoftGracePeriod:\n        memory.available: \"1m30s\""},
		amifamily.FamilyBottlerocket: {"[settings.bootstrap-commands.k8s-ephemeral-storage]", `"ephemeral-storage", "bind"`, "image-gc-high-threshold-percent = 85",
			"cpu-cfs-quota-enforced = false", "[settings.kubernetes.eviction-soft]\n\"memory.available\" = \"500Mi\"", "[settings.kubernetes.eviction-soft-grace-period]\n\"memory.available\" = \"1m30s\""},
	} {
		out := decoded(t, family, b)
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s user data lacks %q:\n%s", family, w, out)
			}
		}
		if again := decoded(t, family, b); again != out {
			t.Errorf("%s user data changes from one render to the next", family)
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
