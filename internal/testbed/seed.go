package testbed

import (
	"fmt"
	"os"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/snapshotfile"
)

// SeedFile is the seed's cluster snapshot, relative to the module root: its
// NodePools web-spot, web-on-demand and gpu-inference and their NodeClasses.
const SeedFile = "examples/2am-spike/snapshot.yaml"

// DiscoveryTag is the tag the emulator's seeded subnets and security group
// carry, with the cluster's name as its value.
const DiscoveryTag = "stowage.dev/discovery"

// SeedPools reads the NodeClasses and NodePools of a snapshot file (SeedFile)
// and adapts each NodeClass to the bed: its subnet and security group
// selectors find the cluster's seeded network, its role is the bed's node
// role, and its status is left to Stowage. The NodeClasses come first.
func (b *Bed) SeedPools(path string) ([]client.Object, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening the seed: %w", err)
	}
	defer f.Close()
	objs, err := snapshotfile.Read(f)
	if err != nil {
		return nil, fmt.Errorf("reading the seed %s: %w", path, err)
	}
	if len(objs.NodePools) == 0 {
		return nil, fmt.Errorf("the seed %s has no NodePool", path)
	}
	var out []client.Object
	tags := map[string]string{DiscoveryTag: b.Cluster}
	for _, nc := range objs.NodeClasses {
		nc = nc.DeepCopy()
		nc.Spec.SubnetSelectorTerms = []v1alpha1.SelectorTerm{{Tags: tags}}
		nc.Spec.SecurityGroupSelectorTerms = []v1alpha1.SecurityGroupSelectorTerm{{Tags: tags}}
		nc.Spec.Role, nc.Spec.InstanceProfile = b.NodeRole, nil
		nc.Status = v1alpha1.NodeClassStatus{}
		out = append(out, nc)
	}
	for _, np := range objs.NodePools {
		np = np.DeepCopy()
		np.Status = v1alpha1.NodePoolStatus{}
		out = append(out, np)
	}
	return out, nil
}
