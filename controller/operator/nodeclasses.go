package operator

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// NodeClasses finds NodeClass objects by name through a client: the
// manager's, which reads from its informer cache, in `stowage run`. It is
// what the AWS cloud provider resolves a pool's NodeClass with.
type NodeClasses struct {
	Reader client.Reader
}

// NodeClass returns the named NodeClass; the error wraps the client's, so
// that apierrors.IsNotFound tells a missing class from a failed read.
func (n NodeClasses) NodeClass(ctx context.Context, name string) (*v1alpha1.NodeClass, error) {
	nc := &v1alpha1.NodeClass{}
	if err := n.Reader.Get(ctx, client.ObjectKey{Name: name}, nc); err != nil {
		return nil, fmt.Errorf("getting nodeclass %s: %w", name, err)
	}
	return nc, nil
}
