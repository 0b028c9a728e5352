package informer

import (
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/state"
)

// nodePools feeds every NodePool.
func nodePools(c *state.Cluster) watch {
	return watch{&v1alpha1.NodePool{}, handler(c.UpdateNodePool, c.DeleteNodePool)}
}

// nodeClasses feeds every NodeClass.
func nodeClasses(c *state.Cluster) watch {
	return watch{&v1alpha1.NodeClass{}, handler(c.UpdateNodeClass, c.DeleteNodeClass)}
}
