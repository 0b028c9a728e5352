package informer

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/state"
)

// pods feeds every Pod: pending ones for provisioning, bound ones for the
// room left on their nodes.
func pods(c *state.Cluster) watch {
	return watch{&corev1.Pod{}, handler(c.UpdatePod, c.DeletePod)}
}
