package provisioning

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// ClusterWriter makes the provisioner's changes to Kubernetes. The controller
// uses ClientWriter; the simulator keeps the claims in memory.
type ClusterWriter interface {
	// CreateNodeClaim creates claim and returns it as stored (with its uid). An
	// AlreadyExists error means the name is taken: the caller picks another.
	CreateNodeClaim(ctx context.Context, claim *v1alpha1.NodeClaim) (*v1alpha1.NodeClaim, error)
}

// ClientWriter is a ClusterWriter over a controller-runtime client.
type ClientWriter struct {
	Client client.Client
}

var _ ClusterWriter = ClientWriter{}

// CreateNodeClaim creates a copy of claim.
func (w ClientWriter) CreateNodeClaim(ctx context.Context, claim *v1alpha1.NodeClaim) (*v1alpha1.NodeClaim, error) {
	out := claim.DeepCopy()
	if err := w.Client.Create(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}
