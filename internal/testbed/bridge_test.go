package testbed_test

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/amifamily"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/nodeboot"
	"github.com/stowage-dev/stowage/internal/testbed"
	"github.com/stowage-dev/stowage/internal/testenv"
)

// userData is what the AWS layer renders for a claim of the pool (AL2023).
func userData(labels map[string]string, taints ...corev1.Taint) string {
	return familyUserData(amifamily.FamilyAL2023, labels, taints...)
}

func familyUserData(family string, labels map[string]string, taints ...corev1.Taint) string {
	r, err := amifamily.Render(family, amifamily.Bootstrap{
		Cluster: amifamily.Cluster{Name: "c", Endpoint: "https://api", CABundle: "Q0E=", CIDR: "10.100.0.0/16"},
		Labels:  labels, Taints: taints,
	})
	if err != nil {
		panic(err)
	}
	return base64.StdEncoding.EncodeToString([]byte(r.Text))
}

func specOf(t *testing.T, name string) awsemu.InstanceTypeSpec {
	t.Helper()
	for _, s := range awsemu.BuiltinCatalogue() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no instance type %s", name)
	return awsemu.InstanceTypeSpec{}
}

// TestNodeForReadsTheUserDataAsANodeDoes: an AL2023 and a Bottlerocket
// node register the labels, taints and cluster DNS their user data gives.
func TestNodeForReadsTheUserDataAsANodeDoes(t *testing.T) {
	labels := map[string]string{v1alpha1.LabelNodePool: "default", "team": "web"}
	taints := []corev1.Taint{v1alpha1.UnregisteredNoExecuteTaint, {Key: "gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule},
		{Key: "spot", Effect: corev1.TaintEffectPreferNoSchedule}}
	for _, family := range []string{nodeboot.AL2023, nodeboot.Bottlerocket} {
		in := awsemu.Instance{ID: "i-0abc", InstanceType: "m6i.large", Zone: "us-east-1b", PrivateIP: "10.0.0.7",
			UserData: familyUserData(family, labels, taints...)}
		node, k, err := testbed.NodeFor(in, specOf(t, "m6i.large"), "us-east-1", testbed.Boot{Family: family})
		if err != nil {
			t.Fatalf("%s: %v", family, err)
		}
		for key, v := range labels {
			if node.Labels[key] != v {
				t.Errorf("%s: label %s = %q, want %q", family, key, node.Labels[key], v)
			}
		}
		slices.SortFunc(node.Spec.Taints, func(a, b corev1.Taint) int { return strings.Compare(a.Key, b.Key) })
		if !slices.EqualFunc(node.Spec.Taints, []corev1.Taint{taints[1], taints[2], taints[0]},
			func(a, b corev1.Taint) bool { return a.MatchTaint(&b) && a.Value == b.Value }) {
			t.Errorf("%s: taints = %v, want %v", family, node.Spec.Taints, taints)
		}
		if !slices.Equal(k.Config.ClusterDNS, []string{"10.100.0.10"}) {
			t.Errorf("%s: clusterDNS %v, want the service CIDR's 10.100.0.10", family, k.Config.ClusterDNS)
		}
	}
}

// TestNodeForRefusesUserDataANodeRefuses: a NodeConfig with a field
// nodeadm's schema does not declare, TOML declaring a table twice, and a
// NodeConfig without the cluster register no Node.
func TestNodeForRefusesUserDataANodeRefuses(t *testing.T) {
	nodeConfig := "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    name: c\n    apiServerEndpoint: https://api\n" +
		"    certificateAuthority: Q0E=\n    cidr: 10.100.0.0/16\n"
	for _, tc := range []struct{ family, data, want string }{
		{nodeboot.AL2023, nodeConfig + "  kubelet:\n    flagz: [a]\n", "spec.kubelet.flagz"},
		{nodeboot.AL2023, "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec: {}\n", "nodeadm requires spec.cluster"},
		{nodeboot.Bottlerocket, "[settings.kubernetes]\n[settings.kubernetes]\n", "not TOML"},
	} {
		in := awsemu.Instance{ID: "i-0bad", InstanceType: "m6i.large", UserData: base64.StdEncoding.EncodeToString([]byte(tc.data))}
		_, _, err := testbed.NodeFor(in, specOf(t, "m6i.large"), "us-east-1", testbed.Boot{Family: tc.family})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s user data %q: error %v, want one saying %q", tc.family, tc.data, err, tc.want)
		}
	}
}

func TestNodeForIsWhatTheKubeletRegisters(t *testing.T) {
	in := awsemu.Instance{ID: "i-0abc", InstanceType: "m6i.large", Zone: "us-east-1b", PrivateIP: "10.0.0.7",
		UserData: userData(map[string]string{"team": "web"}, v1alpha1.UnregisteredNoExecuteTaint)}
	node, _, err := testbed.NodeFor(in, specOf(t, "m6i.large"), "us-east-1", testbed.Boot{Family: nodeboot.AL2023})
	if err != nil {
		t.Fatal(err)
	}
	if node.Name != "ip-10-0-0-7.ec2.internal" || node.Spec.ProviderID != "aws:///us-east-1b/i-0abc" {
		t.Errorf("node %s with provider id %s", node.Name, node.Spec.ProviderID)
	}
	if node.Annotations[testenv.KwokNodeAnnotation] != testenv.KwokNodeAnnotationValue {
		t.Error("the node lacks kwok's annotation")
	}
	for k, v := range map[string]string{corev1.LabelInstanceTypeStable: "m6i.large", corev1.LabelTopologyZone: "us-east-1b",
		corev1.LabelArchStable: "amd64", corev1.LabelHostname: node.Name, "team": "web"} {
		if node.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, node.Labels[k], v)
		}
	}
	// m6i.large (EC2: 2 vCPU, 8192 MiB; nodeadm's table: 3 ENIs of 10 IPv4
	// addresses), worked by hand through nodeadm's and the kubelet's rules:
	//   pods     3 × (10 − 1) + 2 = 29
	//   cpu      2000m − (60m + 10m kube-reserved) = 1930m
	//   memory   8192 − ⌈7.5 % × 8192 = 614.4⌉ = 7577Mi capacity;
	//            7577 − (11 × 29 + 255 = 574 kube-reserved) − 100 eviction = 6903Mi
	//   storage  20Gi root volume − 1Gi kube-reserved − 10 % × 20Gi eviction, the
	//            kubelet's 10 % a float32 (0.100000001…): 17Gi − 32 bytes
	expectResources(t, "capacity", node.Status.Capacity, map[corev1.ResourceName]string{
		corev1.ResourceCPU: "2", corev1.ResourceMemory: "7577Mi", corev1.ResourcePods: "29", corev1.ResourceEphemeralStorage: "20Gi"})
	expectResources(t, "allocatable", node.Status.Allocatable, map[corev1.ResourceName]string{
		corev1.ResourceCPU: "1930m", corev1.ResourceMemory: "6903Mi", corev1.ResourcePods: "29", corev1.ResourceEphemeralStorage: "18253610976"})
}

// expectResources checks each wanted quantity of list, and that list holds no other.
func expectResources(t *testing.T, name string, list corev1.ResourceList, want map[corev1.ResourceName]string) {
	t.Helper()
	for r, w := range want {
		if got := list[r]; got.Cmp(resource.MustParse(w)) != 0 {
			t.Errorf("%s %s = %s, want %s", name, r, got.String(), w)
		}
	}
	for r := range list {
		if _, ok := want[r]; !ok {
			t.Errorf("%s has %s, which is not expected", name, r)
		}
	}
}

func TestNodeForRegistersTheGPUs(t *testing.T) {
	spec := specOf(t, "g6.12xlarge")
	in := awsemu.Instance{ID: "i-0gpu", InstanceType: spec.Name, Zone: "us-east-1a", PrivateIP: "10.0.0.9",
		UserData: familyUserData(amifamily.FamilyAL2023, nil)}
	node, _, err := testbed.NodeFor(in, spec, "us-east-1", testbed.Boot{Family: nodeboot.AL2023})
	if err != nil {
		t.Fatal(err)
	}
	// g6.12xlarge (EC2: 48 vCPU, 196608 MiB, 4 NVIDIA L4; nodeadm's table: 8
	// ENIs of 30 IPv4 addresses), worked by hand through nodeadm's rules:
	//   pods     8 × (30 − 1) + 2 = 234
	//   cpu      48000m − (60m + 10m + 2 × 5m + 44 × 2.5m = 190m kube-reserved) = 47810m
	//   memory   196608 − ⌈7.5 % × 196608 = 14745.6⌉ = 181862Mi capacity;
	//            181862 − (11 × 234 + 255 = 2829 kube-reserved) − 100 eviction = 178933Mi
	//   storage  20Gi − 1Gi − 2Gi − 32 bytes, as for any type on the default root volume
	expectResources(t, "capacity", node.Status.Capacity, map[corev1.ResourceName]string{
		corev1.ResourceCPU: "48", corev1.ResourceMemory: "181862Mi", corev1.ResourcePods: "234",
		corev1.ResourceEphemeralStorage: "20Gi", "nvidia.com/gpu": "4"})
	expectResources(t, "allocatable", node.Status.Allocatable, map[corev1.ResourceName]string{
		corev1.ResourceCPU: "47810m", corev1.ResourceMemory: "178933Mi", corev1.ResourcePods: "234",
		corev1.ResourceEphemeralStorage: "18253610976", "nvidia.com/gpu": "4"})
}

// TestBootDelaysSpreadOverTheRangeAndRepeat: each instance's delay lies in
// [Min, Max], depends on the seed and the id only, and the delays of a
// fleet spread over the range rather than bunching at one end.
func TestBootDelaysSpreadOverTheRangeAndRepeat(t *testing.T) {
	d := testbed.RealisticBoot
	var below, above int
	for i := range 200 {
		id := fmt.Sprintf("i-%017x", i)
		got := d.For(id)
		if got < d.Min || got > d.Max {
			t.Fatalf("delay of %s is %s, outside [%s, %s]", id, got, d.Min, d.Max)
		}
		if again := d.For(id); again != got {
			t.Fatalf("delay of %s is %s, then %s", id, got, again)
		}
		if got < (d.Min+d.Max)/2 {
			below++
		} else {
			above++
		}
	}
	if below < 60 || above < 60 {
		t.Errorf("%d delays in the lower half of the range and %d in the upper, want both near 100", below, above)
	}
	other := d
	other.Seed++
	if d.For("i-0abc") == other.For("i-0abc") && d.For("i-0def") == other.For("i-0def") {
		t.Error("another seed gives the same delays")
	}
	if got := (testbed.BootDelay{}).For("i-0abc"); got != 0 {
		t.Errorf("the zero BootDelay delays %s, want none", got)
	}
}
