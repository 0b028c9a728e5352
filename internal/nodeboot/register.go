package nodeboot

import (
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

// FamilyOfImage is how a node of the image reads its user data: a
// Bottlerocket image reads TOML settings, and every other (the EKS AL2023
// images, and custom images built on them) runs nodeadm.
func FamilyOfImage(name string) string {
	if strings.HasPrefix(name, "bottlerocket") {
		return Bottlerocket
	}
	return AL2023
}

// Volume is one EBS volume of an instance's block device mapping.
type Volume struct {
	Device  string
	SizeGiB int64
}

// defaultVolumeGiB is the size the EKS images give the volume holding the
// kubelet's state (AL2023's root /dev/xvda, Bottlerocket's data /dev/xvdb)
// when the launch maps none.
const defaultVolumeGiB = 20

// EphemeralBytes is the size of the filesystem holding the kubelet's state:
// with the instance store in RAID 0 (nodeadm's localStorage strategy RAID0,
// or a Bottlerocket bootstrap command running `apiclient ephemeral-storage`)
// the instance store, EC2's TotalSizeInGB in decimal gigabytes; else the
// family's volume from the block device mapping, or the image's default.
func (ud *UserData) EphemeralBytes(volumes []Volume, instanceStoreGB int64) int64 {
	if instanceStoreGB > 0 && ud.raid0() {
		return instanceStoreGB * 1_000_000_000
	}
	device := map[string]string{AL2023: "/dev/xvda", Bottlerocket: "/dev/xvdb"}[ud.Family]
	for _, v := range volumes {
		if v.Device == device && v.SizeGiB > 0 {
			return v.SizeGiB << 30
		}
	}
	return defaultVolumeGiB << 30
}

func (ud *UserData) raid0() bool {
	if ud.Family == AL2023 {
		return ud.NodeConfig.Spec.Instance.LocalStorage.Strategy == "RAID0"
	}
	for _, cmd := range table(table(ud.Settings, "settings"), "bootstrap-commands") {
		c, _ := cmd.(map[string]any)
		for _, line := range listOf(c["commands"]) {
			if args := listOf(line); len(args) > 1 && args[0] == "apiclient" && args[1] == "ephemeral-storage" {
				return true
			}
		}
	}
	return false
}

func listOf(v any) []any {
	l, _ := v.([]any)
	return l
}

// Instance is the instance a node boots on: who it is, and what EC2's
// DescribeInstanceTypes says of its type.
type Instance struct {
	ID, Type, Zone, Region, Arch string
	VCPU, MemoryMiB              int64
	// NvidiaGPUs and Neuron are the devices their device plugins advertise
	// (nvidia.com/gpu, aws.amazon.com/neuron).
	NvidiaGPUs, Neuron int64
	// InstanceStoreGB is EC2's TotalSizeInGB of the instance store.
	InstanceStoreGB int64
	// MaxENIs and IPv4PerENI are what EC2 says of the type's networking,
	// which nodeadm asks for a type its table lacks.
	MaxENIs, IPv4PerENI int64
	// Volumes are the block device mapping it launched with.
	Volumes []Volume
}

// Boot is what the node's kubelet registers under name: its configuration,
// and the Node with the well-known labels and the kubelet's own, its
// taints, its provider id, and the capacity and allocatable the kubelet
// reports. The caller adds what its cluster needs (addresses, conditions,
// annotations).
func (ud *UserData) Boot(name string, in Instance) (*corev1.Node, *Kubelet, error) {
	k, err := ud.Kubelet(Host{InstanceID: in.ID, InstanceType: in.Type, Zone: in.Zone, CPUs: in.VCPU,
		ENIs: &ENIInfo{DefaultMaxENIs: in.MaxENIs, IPv4PerInterface: in.IPv4PerENI}})
	if err != nil {
		return nil, nil, err
	}
	capacity := k.Capacity(Facts{VCPU: in.VCPU, MemoryMiB: in.MemoryMiB, NvidiaGPUs: in.NvidiaGPUs, Neuron: in.Neuron,
		EphemeralBytes: ud.EphemeralBytes(in.Volumes, in.InstanceStoreGB)})
	allocatable, err := k.Allocatable(capacity)
	if err != nil {
		return nil, nil, err
	}
	labels := map[string]string{
		corev1.LabelHostname: name, corev1.LabelOSStable: "linux", corev1.LabelArchStable: in.Arch,
		corev1.LabelInstanceTypeStable: in.Type, corev1.LabelTopologyZone: in.Zone, corev1.LabelTopologyRegion: in.Region,
	}
	maps.Copy(labels, k.Labels)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       corev1.NodeSpec{ProviderID: "aws:///" + in.Zone + "/" + in.ID, Taints: k.Taints},
		Status:     corev1.NodeStatus{Capacity: capacity, Allocatable: allocatable},
	}, k, nil
}

// InstanceOf is an instance of the AWS emulator (internal/awsemu) as its
// node sees it: its identity, what EC2 says of its type, and its volumes.
func InstanceOf(in awsemu.Instance, spec awsemu.InstanceTypeSpec, region string, volumes []Volume) Instance {
	out := Instance{ID: in.ID, Type: in.InstanceType, Zone: in.Zone, Region: region, Arch: spec.Arch,
		VCPU: int64(spec.VCPU), MemoryMiB: spec.MemoryMiB, InstanceStoreGB: spec.LocalNVMeGiB,
		MaxENIs: int64(spec.MaxENIs), IPv4PerENI: int64(spec.IPv4PerENI), Volumes: volumes}
	if spec.GPUManufacturer == "nvidia" {
		out.NvidiaGPUs = int64(spec.GPUCount)
	}
	if spec.AcceleratorMfr == "aws" {
		out.Neuron = int64(spec.AcceleratorCount)
	}
	return out
}

// Volumes are the block devices of the launch template an emulated
// instance launched from.
func Volumes(emu *awsemu.Emulator, in awsemu.Instance) []Volume {
	lt, _ := emu.LaunchTemplateByID(in.LaunchTemplate)
	out := make([]Volume, 0, len(lt.BlockDevices))
	for _, d := range lt.BlockDevices {
		out = append(out, Volume{Device: d.DeviceName, SizeGiB: int64(d.VolumeSize)})
	}
	return out
}
