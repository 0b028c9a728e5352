package repair

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// MaxUnhealthy is the share of a pool's nodes that may be unhealthy while
// repair goes on, rounded up (of three nodes, one may be): above it, the
// cause is rather the zone, the network or the image than the nodes, and
// replacing them would take a third of the fleet down at once. It is
// Karpenter's (kubernetes-sigs/karpenter, pkg/controllers/node/health:
// allowedUnhealthyPercent).
var MaxUnhealthy = intstr.FromString("20%")

// unhealthyCondition is the node's Ready condition when it is False (the
// kubelet says the node is not ready) or Unknown (the node lifecycle
// controller heard nothing from the kubelet), and nil otherwise.
func unhealthyCondition(node *corev1.Node) *corev1.NodeCondition {
	for i := range node.Status.Conditions {
		c := &node.Status.Conditions[i]
		if c.Type == corev1.NodeReady {
			if c.Status == corev1.ConditionTrue {
				return nil
			}
			return c
		}
	}
	return nil
}

// repairAfter is how long the pool lets a node stay unhealthy; false for Never.
func repairAfter(pool *v1alpha1.NodePool) (time.Duration, bool) {
	after := pool.Spec.Disruption.RepairAfter
	if after == nil {
		after = ptr.To(v1alpha1.MustParseDuration(v1alpha1.DefaultRepairAfter))
	}
	if after.Duration == nil {
		return 0, false
	}
	return *after.Duration, true
}

// repairAllowed reports whether a pool with total nodes, unhealthy of them,
// may have one repaired, and the most it allows unhealthy.
func repairAllowed(unhealthy, total int) (bool, int) {
	limit, err := intstr.GetScaledValueFromIntOrPercent(&MaxUnhealthy, total, true)
	if err != nil { // MaxUnhealthy is a valid percentage
		panic(err)
	}
	return unhealthy <= limit, limit
}
