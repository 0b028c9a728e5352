package amifamily_test

import (
	"encoding/base64"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

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
