package provisioning_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stowage-dev/stowage/controller/state/statetest"
)

// The pods of a node marked for deletion count as pending: their capacity is
// launched when the node is marked, not after the drain evicts them, and
// they are nominated to it, which keeps it from looking idle.
func TestPodsOfANodeMarkedForDeletionGetCapacityAtOnce(t *testing.T) {
	f := setup(t)
	leaving := statetest.Node("leaving", "aws:///us-east-1a/i-leaving", "2", "8Gi")
	f.env.Create(t, leaving)
	web := statetest.Pod(f.env.Namespace, "web", "1500m", "1Gi")
	web.Spec.NodeName = leaving.Name
	f.env.Create(t, web)
	statetest.Eventually(t, 10*time.Second, func() error {
		for _, sn := range f.env.Cluster.Snapshot(nil, nil).Nodes {
			if sn.Name() == "leaving" && len(sn.Pods) == 1 && len(f.env.Cluster.NodePools()) == 1 {
				return nil
			}
		}
		return fmt.Errorf("the state does not show the pod on its node yet")
	})
	p := f.provisioner(f.env.Cluster, f.recorder)
	if b, err := p.Provision(t.Context()); err != nil || len(b.NodeClaims) != 0 {
		t.Fatalf("before the mark: %v claims, error %v; want none", b, err)
	}
	f.env.Cluster.MarkForDeletion("leaving")
	b, err := p.Provision(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(b.NodeClaims) != 1 || len(b.Decision.NewNodeClaims[0].Pods) != 1 || b.Decision.NewNodeClaims[0].Pods[0].Name != "web" {
		t.Fatalf("after the mark: claims %d, want one for pod web", len(b.NodeClaims))
	}
	target := b.NodeClaims[0].Name
	for _, sn := range f.env.Cluster.Snapshot(nil, nil).Nodes {
		if sn.Name() == target && !sn.Nominated {
			t.Errorf("the claim launched for the leaving pod is not Nominated")
		}
	}
}
