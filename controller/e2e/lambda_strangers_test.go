package e2e_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

// strangerZone is where the strangers run.
const strangerZone = "us-east-1b"

// strangers are instances Stowage does not manage, launched straight into
// EC2, each with the Node the bed's kubelet registered for it (tainted, so
// that no pod lands there), and a spot instance whose Node is gone (ghost).
type strangers struct {
	nodes []*corev1.Node
	ghost string
}

func (s strangers) ids() []string {
	out := make([]string, len(s.nodes))
	for i, n := range s.nodes {
		out[i] = instanceOf(n)
	}
	return out
}

// launchStrangers launches an on-demand instance per name ("reserved" into
// an open capacity reservation of its own) and the ghost, and waits for
// their Nodes.
func (b *bed) launchStrangers(t *testing.T, names ...string) strangers {
	t.Helper()
	image := b.Emulator.AddImage(awsemu.Image{Name: "stranger", Architecture: "x86_64"})
	lt := b.Emulator.AddLaunchTemplate(awsemu.LaunchTemplate{Name: "strangers", ImageID: image,
		UserData: base64.StdEncoding.EncodeToString([]byte(b.nodeConfig()))})
	launch := func(capacityType string) string {
		res, err := b.Emulator.CreateFleet(awsemu.FleetRequest{CapacityType: capacityType, TotalTargetCapacity: 1,
			Overrides: []awsemu.FleetOverride{{LaunchTemplateID: lt, InstanceType: "m6i.large", Zone: strangerZone}}})
		if err != nil || len(res.Instances) != 1 {
			t.Fatalf("launching a stranger: %+v, %v", res, err)
		}
		return res.Instances[0].InstanceIDs[0]
	}
	var s strangers
	for _, name := range names {
		if name == "reserved" {
			b.Emulator.AddCapacityReservation(awsemu.CapacityReservation{InstanceType: "m6i.large", Zone: strangerZone, TotalInstanceCount: 1})
		}
		node := b.nodeOf(t, launch(awsemu.CapacityOnDemand))
		stored := node.DeepCopy()
		node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: "e2e.stowage.dev/stranger", Effect: corev1.TaintEffectNoSchedule})
		if err := b.Admin.Patch(context.Background(), node, client.MergeFrom(stored)); err != nil {
			t.Fatalf("tainting stranger %s: %v", name, err)
		}
		s.nodes = append(s.nodes, node)
	}
	s.ghost = launch(awsemu.CapacitySpot)
	if err := b.Admin.Delete(context.Background(), b.nodeOf(t, s.ghost)); err != nil {
		t.Fatal(err)
	}
	return s
}

// nodeOf waits for the Node the bed's kubelet registers for the instance.
func (b *bed) nodeOf(t *testing.T, id string) *corev1.Node {
	t.Helper()
	var node *corev1.Node
	b.eventually(settle, func() error {
		var nodes corev1.NodeList
		if err := b.Admin.List(context.Background(), &nodes, client.UnsafeDisableDeepCopy); err != nil {
			return err
		}
		for i := range nodes.Items {
			if instanceOf(&nodes.Items[i]) == id {
				node = nodes.Items[i].DeepCopy()
				return nil
			}
		}
		return fmt.Errorf("no node for instance %s yet", id)
	})
	return node
}
