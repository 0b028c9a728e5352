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
	node, k, err := ud.Boot(name, nodeboot.InstanceOf(in, spec, region, volumes))
	if err != nil {
		return nil, nil, fmt.Errorf("instance %s: %w", in.ID, err)
	}
	return node, k, nil
}
