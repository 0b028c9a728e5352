package informer

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/state"
)

// nodes feeds every Node.
func nodes(c *state.Cluster) watch {
	return watch{&corev1.Node{}, handler(c.UpdateNode, c.DeleteNode)}
}
