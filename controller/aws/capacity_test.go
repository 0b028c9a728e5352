package aws_test

import (
	"encoding/base64"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/instance"
	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

func discovered(t *testing.T, e *env) map[string]*cloudprovider.InstanceType {
	t.Helper()
	types, err := e.cp.InstanceTypes(ctx(t), nodePool("default"))
	if err != nil {
		t.Fatalf("listing instance types: %v", err)
	}
	out := map[string]*cloudprovider.InstanceType{}
	for _, it := range types {
		out[it.Name] = it
	}
	return out
}

// TestNeuronAccelerators: Inferentia and Trainium types discovered from
// DescribeInstanceTypes carry the accelerator labels and Neuron devices the
// built-in catalogue gives them, and a claim can select them by label.
func TestNeuronAccelerators(t *testing.T) {
	var specs []awsemu.InstanceTypeSpec
	for _, s := range awsemu.BuiltinCatalogue() {
		if s.Name == "inf2.xlarge" || s.Name == "trn1.32xlarge" || s.Name == "m6i.large" {
			specs = append(specs, s)
		}
	}
	e := newEnv(t, specs, 3)
	types := discovered(t, e)
	cases := []struct {
		name          string
		accel, count  string
		neuronDevices int64
	}{
		{"inf2.xlarge", "inferentia2", "1", 1},
		{"trn1.32xlarge", "trainium", "16", 16},
		{"m6i.large", "", "", 0},
	}
	for _, tc := range cases {
		labels := types[tc.name].Requirements.Labels()
		want := map[string]string{v1alpha1.LabelInstanceAcceleratorName: tc.accel, v1alpha1.LabelInstanceAcceleratorCount: tc.count,
			v1alpha1.LabelInstanceAcceleratorManufacturer: map[bool]string{true: "aws"}[tc.accel != ""]}
		for k, v := range want {
			if labels[k] != v {
				t.Errorf("%s label %s = %q, want %q", tc.name, k, labels[k], v)
			}
		}
		if got := types[tc.name].Capacity.Get("aws.amazon.com/neuron"); got != tc.neuronDevices {
			t.Errorf("%s has %d aws.amazon.com/neuron, want %d", tc.name, got, tc.neuronDevices)
		}
	}
	claim := nodeClaim("neuron", nil, []string{"on-demand"})
	claim.Spec.Requirements[0] = v1alpha1.NodeSelectorRequirementWithMinValues{Key: v1alpha1.LabelInstanceAcceleratorName,
		Operator: v1alpha1.OperatorIn, Values: []string{"inferentia2"}}
	got, err := e.cp.Create(ctx(t), claim)
	if err != nil || got.Labels[corev1.LabelInstanceTypeStable] != "inf2.xlarge" {
		t.Fatalf("Create = %v, %v; want inf2.xlarge, the only Inferentia2 type", got, err)
	}
}

// TestRootVolumeSizesEphemeralStorage: the NodeClass's block device mappings
// size the volume that holds ephemeral storage (the one marked rootVolume,
// else the AMI family's device), which sets the types' ephemeral-storage
// capacity and the launch template's volume.
func TestRootVolumeSizesEphemeralStorage(t *testing.T) {
	bdm := func(dev, size string, root bool) v1alpha1.BlockDeviceMapping {
		q := resource.MustParse(size)
		return v1alpha1.BlockDeviceMapping{DeviceName: &dev, EBS: &v1alpha1.BlockDevice{VolumeSize: &q}, RootVolume: root}
	}
	cases := []struct {
		name    string
		alias   string
		bdms    []v1alpha1.BlockDeviceMapping
		wantGiB int64
	}{
		{"no mappings: the catalogue default", "al2023@latest", nil, catalogue.DefaultRootVolumeGiB},
		{"marked root volume", "al2023@latest", []v1alpha1.BlockDeviceMapping{bdm("/dev/xvdb", "50Gi", false), bdm("/dev/xvda", "100Gi", true)}, 100},
		{"al2023 root device", "al2023@latest", []v1alpha1.BlockDeviceMapping{bdm("/dev/xvda", "80Gi", false)}, 80},
		{"bottlerocket data volume", "bottlerocket@latest", []v1alpha1.BlockDeviceMapping{bdm("/dev/xvda", "4Gi", false), bdm("/dev/xvdb", "60Gi", false)}, 60},
		{"decimal size rounds up to whole GiB", "al2023@latest", []v1alpha1.BlockDeviceMapping{bdm("/dev/xvda", "100G", true)}, 94},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, awsemu.SmallCatalogue(), 3)
			e.nc.Spec.AMISelectorTerms[0].Alias, e.nc.Spec.BlockDeviceMappings = tc.alias, tc.bdms
			it := discovered(t, e)["m6i.large"]
			if got := it.Capacity.EphemeralStorage; got != tc.wantGiB<<30 {
				t.Fatalf("ephemeral-storage capacity %d GiB, want %d", got>>30, tc.wantGiB)
			}
			claim, err := e.cp.Create(ctx(t), nodeClaim("disk", []string{"m6i.large"}, []string{"on-demand"}))
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			if got := claim.Status.Capacity[corev1.ResourceEphemeralStorage]; got.Value() != tc.wantGiB<<30 {
				t.Errorf("claim ephemeral-storage capacity %s, want %dGi", got.String(), tc.wantGiB)
			}
			checkVolumes(t, e, claim, tc.bdms)
		})
	}
}

// checkVolumes compares the launch template's volumes with the mappings.
func checkVolumes(t *testing.T, e *env, claim *v1alpha1.NodeClaim, bdms []v1alpha1.BlockDeviceMapping) {
	t.Helper()
	id, _ := instance.ParseProviderID(claim.Status.ProviderID)
	in, _ := e.emu.Instance(id)
	for _, lt := range e.emu.LaunchTemplates() {
		if lt.ID != in.LaunchTemplate {
			continue
		}
		if len(lt.BlockDevices) != len(bdms) {
			t.Fatalf("template has %d volumes, want %d", len(lt.BlockDevices), len(bdms))
		}
		for i, b := range bdms {
			want := (b.EBS.VolumeSize.Value() + 1<<30 - 1) >> 30
			if lt.BlockDevices[i].DeviceName != *b.DeviceName || int64(lt.BlockDevices[i].VolumeSize) != want {
				t.Errorf("volume %d: %s %d GiB, want %s %d GiB", i, lt.BlockDevices[i].DeviceName, lt.BlockDevices[i].VolumeSize, *b.DeviceName, want)
			}
		}
		return
	}
	t.Fatalf("instance %s was launched from no known template", id)
}

// TestInstanceStoreRAID0 launches g5.xlarge for a NodeClass with
// instanceStorePolicy RAID0 and images selected by id with amiFamily
// AL2023: ephemeral storage is the instance store (250 GB), the launch
// template's user data asks nodeadm for RAID0 with Stowage's NodeConfig.
func TestInstanceStoreRAID0(t *testing.T) {
	var specs []awsemu.InstanceTypeSpec
	for _, s := range awsemu.BuiltinCatalogue() {
		if s.Name == "g5.xlarge" {
			specs = append(specs, s)
		}
	}
	e := newEnv(t, specs, 1)
	raid0, family := v1alpha1.InstanceStorePolicyRAID0, v1alpha1.AMIFamilyAL2023
	e.nc.Spec.InstanceStorePolicy, e.nc.Spec.AMIFamily = &raid0, &family
	e.nc.Spec.AMISelectorTerms = []v1alpha1.AMISelectorTerm{{ID: e.images["/aws/service/eks/optimized-ami/"+k8sVersion+"/amazon-linux-2023/x86_64/nvidia/recommended/image_id"]}}
	if it := discovered(t, e)["g5.xlarge"]; it.Capacity.EphemeralStorage != 250_000_000_000 {
		t.Fatalf("g5.xlarge ephemeral-storage capacity %d, want 250000000000 (the instance store)", it.Capacity.EphemeralStorage)
	}
	claim, err := e.cp.Create(ctx(t), nodeClaim("raid", []string{"g5.xlarge"}, []string{"on-demand"}))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	id, _ := instance.ParseProviderID(claim.Status.ProviderID)
	in, _ := e.emu.Instance(id)
	for _, lt := range e.emu.LaunchTemplates() {
		if lt.ID != in.LaunchTemplate {
			continue
		}
		data, err := base64.StdEncoding.DecodeString(lt.UserData)
		if err != nil || !strings.Contains(string(data), "localStorage:\n      strategy: RAID0") || !strings.Contains(string(data), "kind: NodeConfig") {
			t.Errorf("user data %q (%v) does not ask nodeadm for RAID0", data, err)
		}
		return
	}
	t.Fatalf("instance %s was launched from no known template", id)
}
