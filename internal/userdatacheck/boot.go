package userdatacheck

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/nodeboot"
)

// Boot is what an emulated instance's kubelet registers under name: its
// user data read as a node of the family reads it, each NodeConfig checked
// against nodeadm's schema first (user data a node would refuse registers
// nothing), and the Node and kubelet configuration that gives
// (nodeboot.UserData.Boot) with its type's EC2 facts and its volumes.
func Boot(name string, in awsemu.Instance, spec awsemu.InstanceTypeSpec, region, family string, volumes []nodeboot.Volume) (*corev1.Node, *nodeboot.Kubelet, error) {
	ud, err := Check(family, in.UserData)
	if err != nil {
		return nil, nil, fmt.Errorf("instance %s: its %s user data: %w", in.ID, family, err)
	}
	node, k, err := ud.Boot(name, instanceOf(in, spec, region, volumes))
	if err != nil {
		return nil, nil, fmt.Errorf("instance %s: %w", in.ID, err)
	}
	return node, k, nil
}

// instanceOf is an emulated instance as its node sees it: its identity and
// what EC2 says of its type.
func instanceOf(in awsemu.Instance, spec awsemu.InstanceTypeSpec, region string, volumes []nodeboot.Volume) nodeboot.Instance {
	out := nodeboot.Instance{ID: in.ID, Type: in.InstanceType, Zone: in.Zone, Region: region, Arch: spec.Arch,
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

// Volumes are the block devices of the launch template an instance launched from.
func Volumes(emu *awsemu.Emulator, in awsemu.Instance) []nodeboot.Volume {
	lt, _ := emu.LaunchTemplateByID(in.LaunchTemplate)
	out := make([]nodeboot.Volume, 0, len(lt.BlockDevices))
	for _, d := range lt.BlockDevices {
		out = append(out, nodeboot.Volume{Device: d.DeviceName, SizeGiB: int64(d.VolumeSize)})
	}
	return out
}
