package provisioning_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/state/statetest"
)

// The pods of a node being deleted count as pending: their capacity is
// launched when the deletion starts, not after the drain evicts them, and
// they are nominated to it, which keeps it from looking idle.
func TestPodsOfANodeBeingDeletedGetCapacityAtOnce(t *testing.T) {
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
	// Marked by a disruption command, which launches its own replacement:
	// nothing yet. Deleted: its pods get capacity at once.
	f.env.Cluster.MarkForDeletion("leaving")
	if b, err := p.Provision(t.Context()); err != nil || len(b.NodeClaims) != 0 {
		t.Fatalf("marked only: %v claims, error %v; want none", b, err)
	}
	deleting := leaving.DeepCopy()
	deleting.Finalizers = []string{"example.com/hold"}
	if err := f.env.Client.Update(t.Context(), deleting); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // let the node go, for the tests that follow on this control plane
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		_ = f.env.Client.Patch(context.Background(), deleting, client.RawPatch(types.MergePatchType, patch))
	})
	if err := f.env.Client.Delete(t.Context(), deleting); err != nil {
		t.Fatal(err)
	}
	statetest.Eventually(t, 10*time.Second, func() error {
		for _, sn := range f.env.Cluster.Snapshot(nil, nil).Nodes {
			if sn.Name() == "leaving" && sn.Node.DeletionTimestamp != nil {
				return nil
			}
		}
		return fmt.Errorf("the state does not show the node being deleted yet")
	})
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
