package v1alpha1

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// DefaultCapacityBlockLeadTime is a pool's capacityBlockLeadTime when unset:
// EC2 starts terminating a block's instances 30 minutes before its end, and
// the other 30 minutes are the replacement's launch and the drain.
const DefaultCapacityBlockLeadTime = 60 * time.Minute

// MinCapacityBlockLeadTime is the least capacityBlockLeadTime: EC2's own
// 30 minutes.
const MinCapacityBlockLeadTime = 30 * time.Minute

// Floor is the part of a pool's spec that keeps capacity whatever the load:
// a minimum of nodes, and how early nodes leave a Capacity Block.
type Floor struct {
	// MinNodes is how many nodes the pool keeps whatever the load: Stowage
	// launches empty nodes up to it, the pool still grows above it, and
	// consolidation never takes the pool below it (it removes only nodes
	// above the floor). A node of the floor that is interrupted, drifts or
	// expires is replaced like any other. A nodes limit below it is an error.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	MinNodes *int32 `json:"minNodes,omitempty"`
	// CapacityBlockLeadTime is how long before a Capacity Block ends its
	// nodes are replaced by the pool's next option (another reservation,
	// spot or on-demand) and drained, and from when no new node launches into
	// the block. EC2 terminates a block's instances 30 minutes before its
	// end, so the lead time is at least 30m; the 30 minutes above that are
	// for the replacement to launch and the pods to move.
	// +optional
	// +kubebuilder:default="60m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule=`self.matches(r'^[+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self) >= duration('30m')`,message="capacityBlockLeadTime must be a duration of at least 30m (EC2 terminates a block's instances 30 minutes before its end), such as 60m"
	CapacityBlockLeadTime *metav1.Duration `json:"capacityBlockLeadTime,omitempty"`
}

// BlockLeadTime is the pool's capacityBlockLeadTime, its default when unset.
func (np *NodePool) BlockLeadTime() time.Duration {
	if d := np.Spec.CapacityBlockLeadTime; d != nil {
		return d.Duration
	}
	return DefaultCapacityBlockLeadTime
}

// FloorNodes is the pool's minNodes, 0 when unset.
func (np *NodePool) FloorNodes() int {
	if np.Spec.MinNodes == nil {
		return 0
	}
	return int(*np.Spec.MinNodes)
}

// validateFloor checks minNodes against the pool's nodes limit, and the
// lead time's least.
func (in *NodePool) validateFloor(spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	if n := in.Spec.MinNodes; n != nil {
		if *n < 0 || *n > 1000 {
			errs = append(errs, field.Invalid(spec.Child("minNodes"), *n, "must be between 0 and 1000"))
		}
		if q, ok := in.Spec.Limits["nodes"]; ok && q.Value() < int64(*n) {
			errs = append(errs, field.Invalid(spec.Child("minNodes"), *n, fmt.Sprintf(
				"is above the pool's nodes limit of %s: lower minNodes or raise limits.nodes", q.String())))
		}
	}
	if d := in.Spec.CapacityBlockLeadTime; d != nil && d.Duration < MinCapacityBlockLeadTime {
		errs = append(errs, field.Invalid(spec.Child("capacityBlockLeadTime"), d.Duration.String(),
			"must be at least 30m: EC2 terminates a block's instances 30 minutes before its end; 60m leaves 30 minutes to replace them"))
	}
	return errs
}
