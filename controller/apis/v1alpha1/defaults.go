package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Defaults applied to every object before it is validated or used. The CRD schema
// carries the same values as +kubebuilder:default markers where it can.
const (
	DefaultExpireAfter      = "720h"
	DefaultConsolidateAfter = "0s"
	DefaultReturnAfter      = "10m"
	DefaultRepairAfter      = "30m"
	DefaultBudgetNodes      = "10%"
	DefaultHTTPTokens       = "required"
	DefaultHTTPEndpoint     = "enabled"
	DefaultHTTPProtocolIPv6 = "disabled"
	DefaultHTTPPutHopLimit  = int64(1)
	DefaultNodeClassKind    = "NodeClass"
)

// SetDefaults fills the fields a user may leave out.
func (in *NodePool) SetDefaults() {
	spec := &in.Spec
	if spec.Disruption.ConsolidationPolicy == "" {
		spec.Disruption.ConsolidationPolicy = ConsolidationPolicyWhenEmptyOrUnderutilized
	}
	if spec.Disruption.ConsolidateAfter == nil {
		spec.Disruption.ConsolidateAfter = ptr.To(MustParseDuration(DefaultConsolidateAfter))
	}
	if spec.Disruption.ReturnAfter == nil {
		spec.Disruption.ReturnAfter = ptr.To(MustParseDuration(DefaultReturnAfter))
	}
	if spec.Disruption.RepairAfter == nil {
		spec.Disruption.RepairAfter = ptr.To(MustParseDuration(DefaultRepairAfter))
	}
	if len(spec.Disruption.Budgets) == 0 {
		spec.Disruption.Budgets = []Budget{{Nodes: DefaultBudgetNodes}}
	}
	if spec.Template.Spec.ExpireAfter == nil {
		spec.Template.Spec.ExpireAfter = ptr.To(MustParseDuration(DefaultExpireAfter))
	}
	if ref := spec.Template.Spec.NodeClassRef; ref != nil {
		ref.SetDefaults()
	}
	if spec.CapacityBlockLeadTime == nil {
		spec.CapacityBlockLeadTime = &metav1.Duration{Duration: DefaultCapacityBlockLeadTime}
	}
}

// SetDefaults fills the group and kind of a reference.
func (in *NodeClassReference) SetDefaults() {
	if in.Group == "" {
		in.Group = Group
	}
	if in.Kind == "" {
		in.Kind = DefaultNodeClassKind
	}
}

// SetDefaults requires IMDSv2 with a hop limit of 1 unless the user said otherwise.
func (in *NodeClass) SetDefaults() {
	if in.Spec.MetadataOptions == nil {
		in.Spec.MetadataOptions = &MetadataOptions{}
	}
	m := in.Spec.MetadataOptions
	if m.HTTPEndpoint == nil {
		m.HTTPEndpoint = ptr.To(DefaultHTTPEndpoint)
	}
	if m.HTTPProtocolIPv6 == nil {
		m.HTTPProtocolIPv6 = ptr.To(DefaultHTTPProtocolIPv6)
	}
	if m.HTTPPutResponseHopLimit == nil {
		m.HTTPPutResponseHopLimit = ptr.To(DefaultHTTPPutHopLimit)
	}
	if m.HTTPTokens == nil {
		m.HTTPTokens = ptr.To(DefaultHTTPTokens)
	}
}
