package disruption

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// ClusterWriter makes the disruption controller's changes to Kubernetes. The
// controller uses ClientWriter; the simulator may keep claims in memory.
type ClusterWriter interface {
	// DeleteNodeClaim deletes claim; the termination controller then drains
	// its node and terminates its instance. A NotFound error means the claim
	// is already gone, a Conflict error that the name now belongs to another
	// claim (a different UID): either way there is nothing left to delete.
	DeleteNodeClaim(ctx context.Context, claim *v1alpha1.NodeClaim) error
}

// ClientWriter is a ClusterWriter over a controller-runtime client.
type ClientWriter struct {
	Client client.Client
}

var _ ClusterWriter = ClientWriter{}

// DeleteNodeClaim deletes the claim with claim's name, provided it is still
// the same object (its UID), so that a claim recreated under that name is
// left alone.
func (w ClientWriter) DeleteNodeClaim(ctx context.Context, claim *v1alpha1.NodeClaim) error {
	var opts []client.DeleteOption
	if claim.UID != "" {
		uid := claim.UID
		opts = append(opts, client.Preconditions{UID: &uid})
	}
	return w.Client.Delete(ctx, claim.DeepCopy(), opts...)
}
