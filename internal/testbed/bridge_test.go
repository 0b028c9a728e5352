package testbed_test

import (
	"encoding/base64"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/amifamily"
	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/testbed"
	"github.com/stowage-dev/stowage/internal/testenv"
)

// userData is what the AWS layer renders for a claim of the pool (AL2023).
func userData(labels map[string]string, taints ...corev1.Taint) string {
	return familyUserData(amifamily.FamilyAL2023, labels, taints...)
}

func familyUserData(family string, labels map[string]string, taints ...corev1.Taint) string {
	return amifamily.UserData(family, amifamily.Bootstrap{
		Cluster: amifamily.Cluster{Name: "c", Endpoint: "https://api", CABundle: "Q0E=", CIDR: "10.100.0.0/16"},
		Labels:  labels, Taints: taints,
	})
}

func TestKubeletFlagsReadWhatTheAWSLayerWrites(t *testing.T) {
	labels := map[string]string{v1alpha1.LabelNodePool: "default", "team": "web"}
	taints := []corev1.Taint{v1alpha1.UnregisteredNoExecuteTaint, {Key: "gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule},
		{Key: "spot", Effect: corev1.TaintEffectPreferNoSchedule}}
	for _, family := range []string{amifamily.FamilyAL2023, amifamily.FamilyBottlerocket} {
		gotLabels, gotTaints, err := testbed.KubeletFlags(familyUserData(family, labels, taints...))
		if err != nil {
			t.Fatalf("%s: %v", family, err)
		}
		if len(gotLabels) != len(labels) || gotLabels["team"] != "web" || gotLabels[v1alpha1.LabelNodePool] != "default" {
			t.Errorf("%s: labels = %v, want %v", family, gotLabels, labels)
		}
		if !slices.EqualFunc(gotTaints, taints, func(a, b corev1.Taint) bool { return a.MatchTaint(&b) && a.Value == b.Value }) {
			t.Errorf("%s: taints = %v, want %v", family, gotTaints, taints)
		}
	}
	if _, _, err := testbed.KubeletFlags("not base64!"); err == nil {
		t.Error("KubeletFlags accepted user data that is not base64")
	}
	bad := base64.StdEncoding.EncodeToString([]byte("    - --register-with-taints=novalue\n"))
	if _, _, err := testbed.KubeletFlags(bad); err == nil {
		t.Error("KubeletFlags accepted a taint without an effect")
	}
}

func TestNodeForIsWhatTheKubeletRegisters(t *testing.T) {
	var spec awsemu.InstanceTypeSpec
	for _, s := range awsemu.SmallCatalogue() {
		if s.Name == "m6i.large" {
			spec = s
		}
	}
	in := awsemu.Instance{ID: "i-0abc", InstanceType: "m6i.large", Zone: "us-east-1b", PrivateIP: "10.0.0.7",
		UserData: userData(map[string]string{"team": "web"}, v1alpha1.UnregisteredNoExecuteTaint)}
	node, err := testbed.NodeFor(in, spec, "us-east-1")
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
	if len(node.Spec.Taints) != 1 || !node.Spec.Taints[0].MatchTaint(&v1alpha1.UnregisteredNoExecuteTaint) {
		t.Errorf("taints = %v, want the unregistered taint", node.Spec.Taints)
	}
	// The built-in catalogue's m6i.large, through the same formulas the AWS
	// layer plans with: 29 pods, 1930m CPU allocatable.
	infos := catalogue.Builtin()
	i := slices.IndexFunc(infos, func(info catalogue.Info) bool { return info.Name == "m6i.large" })
	it := catalogue.NewInstanceType(infos[i], catalogue.DefaultOptions(), nil)
	want := it.Allocatable().List()
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods} {
		got := node.Status.Allocatable[r]
		if w := want[r]; got.Cmp(w) != 0 {
			t.Errorf("allocatable %s = %s, want %s", r, got.String(), w.String())
		}
	}
}

func TestNodeForRegistersTheGPUs(t *testing.T) {
	var spec awsemu.InstanceTypeSpec
	for _, s := range awsemu.BuiltinCatalogue() {
		if s.Name == "g6.12xlarge" {
			spec = s
		}
	}
	in := awsemu.Instance{ID: "i-0gpu", InstanceType: spec.Name, Zone: "us-east-1a", PrivateIP: "10.0.0.9",
		UserData: familyUserData(amifamily.FamilyAL2023, nil)}
	node, err := testbed.NodeFor(in, spec, "us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	for name, list := range map[string]corev1.ResourceList{"capacity": node.Status.Capacity, "allocatable": node.Status.Allocatable} {
		if got := list["nvidia.com/gpu"]; got.Value() != 4 {
			t.Errorf("%s nvidia.com/gpu = %s, want 4", name, got.String())
		}
	}
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
