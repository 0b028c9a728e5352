package informer

import (
	appsv1 "k8s.io/api/apps/v1"

	"github.com/stowage-dev/stowage/controller/state"
)

// daemonSets feeds every DaemonSet: their pods land on every new node.
func daemonSets(c *state.Cluster) watch {
	return watch{&appsv1.DaemonSet{}, handler(c.UpdateDaemonSet, c.DeleteDaemonSet)}
}
