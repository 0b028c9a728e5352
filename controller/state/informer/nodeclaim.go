package informer

import (
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/state"
)

// nodeClaims feeds every NodeClaim.
func nodeClaims(c *state.Cluster) watch {
	return watch{&v1alpha1.NodeClaim{}, handler(c.UpdateNodeClaim, c.DeleteNodeClaim)}
}
