package nodepool

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// ResourceNodes is the pseudo-resource counting a pool's nodes, in its
// status and in its limits.
const ResourceNodes corev1.ResourceName = "nodes"

// Reasons of a NodePool's Ready condition.
const (
	// ReasonNodeClassReady: the referenced NodeClass is Ready.
	ReasonNodeClassReady = "NodeClassReady"
	// ReasonNodeClassNotReady: the referenced NodeClass exists but is not Ready.
	ReasonNodeClassNotReady = "NodeClassNotReady"
	// ReasonNodeClassNotFound: the referenced NodeClass does not exist.
	ReasonNodeClassNotFound = "NodeClassNotFound"
)

// Resources sums the capacity of the claims that are not being deleted
// (cpu, memory, pods, ephemeral storage and any extended resource) and
// counts them under ResourceNodes. A claim not yet launched has no capacity
// but counts as a node, as it does against the pool's limits.
func Resources(claims []v1alpha1.NodeClaim) corev1.ResourceList {
	out := corev1.ResourceList{}
	var nodes int64
	for i := range claims {
		if !claims[i].DeletionTimestamp.IsZero() {
			continue
		}
		nodes++
		for name, q := range claims[i].Status.Capacity {
			sum := out[name]
			sum.Add(q)
			out[name] = sum
		}
	}
	out[ResourceNodes] = *resource.NewQuantity(nodes, resource.DecimalSI)
	return out
}

// Readiness returns the pool's Ready condition (type, status, reason and
// message) given its NodeClass, nil when the NodeClass does not exist.
func Readiness(pool *v1alpha1.NodePool, nc *v1alpha1.NodeClass) metav1.Condition {
	name := ""
	if ref := pool.Spec.Template.Spec.NodeClassRef; ref != nil {
		name = ref.Name
	}
	cond := metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse}
	if nc == nil {
		cond.Reason = ReasonNodeClassNotFound
		cond.Message = fmt.Sprintf("NodeClass %q does not exist; create it or point spec.template.spec.nodeClassRef at one that does", name)
		return cond
	}
	ready := meta.FindStatusCondition(nc.Status.Conditions, v1alpha1.ConditionReady)
	switch {
	case ready == nil:
		cond.Reason = ReasonNodeClassNotReady
		cond.Message = fmt.Sprintf("NodeClass %q has not been resolved yet", name)
	case ready.Status != metav1.ConditionTrue:
		cond.Reason = ReasonNodeClassNotReady
		cond.Message = fmt.Sprintf("NodeClass %q is not ready", name)
		if ready.Message != "" {
			cond.Message += ": " + ready.Message
		}
	default:
		cond.Status, cond.Reason = metav1.ConditionTrue, ReasonNodeClassReady
		cond.Message = fmt.Sprintf("NodeClass %q is ready", name)
	}
	return cond
}
