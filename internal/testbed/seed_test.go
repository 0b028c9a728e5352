package testbed_test

import (
	"testing"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/testbed"
)

func TestSeedPoolsAdaptTheNodeClassesToTheBed(t *testing.T) {
	b := &testbed.Bed{Cluster: "bed", NodeRole: "BedRole"}
	objs, err := b.SeedPools("../../" + testbed.SeedFile)
	if err != nil {
		t.Fatal(err)
	}
	var classes, pools []string
	for _, o := range objs {
		switch o := o.(type) {
		case *v1alpha1.NodeClass:
			if len(pools) > 0 {
				t.Errorf("nodeclass %s comes after a nodepool", o.Name)
			}
			classes = append(classes, o.Name)
			terms, sgs := o.Spec.SubnetSelectorTerms, o.Spec.SecurityGroupSelectorTerms
			if o.Spec.Role != "BedRole" || len(terms) != 1 || terms[0].Tags[testbed.DiscoveryTag] != "bed" ||
				len(sgs) != 1 || sgs[0].Tags[testbed.DiscoveryTag] != "bed" || len(o.Status.Subnets) != 0 {
				t.Errorf("nodeclass %s is not adapted to the bed: %+v, status %+v", o.Name, o.Spec, o.Status)
			}
		case *v1alpha1.NodePool:
			pools = append(pools, o.Name)
		default:
			t.Errorf("unexpected %T", o)
		}
	}
	if len(classes) != 2 || len(pools) != 3 {
		t.Errorf("nodeclasses %v and nodepools %v, want web and gpu, and web-spot, web-on-demand and gpu-inference", classes, pools)
	}
	if _, err := b.SeedPools("no-such-file.yaml"); err == nil {
		t.Error("SeedPools read a file that does not exist")
	}
}
