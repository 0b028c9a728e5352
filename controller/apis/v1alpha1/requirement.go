package v1alpha1

// Operators a requirement may use. Gt, Lt, Gte and Lte compare integers.
const (
	OperatorIn           = "In"
	OperatorNotIn        = "NotIn"
	OperatorExists       = "Exists"
	OperatorDoesNotExist = "DoesNotExist"
	OperatorGt           = "Gt"
	OperatorLt           = "Lt"
	OperatorGte          = "Gte"
	OperatorLte          = "Lte"
)

// Operators lists every operator a requirement accepts.
var Operators = []string{OperatorIn, OperatorNotIn, OperatorExists, OperatorDoesNotExist, OperatorGt, OperatorLt, OperatorGte, OperatorLte}

// NodeSelectorRequirementWithMinValues constrains one node label. MinValues asks for
// at least that many distinct values to stay available for the launch, so that the
// cloud has that many instance types (or families, or zones) to fall back on.
// ---
// The CEL rules mirror ValidateRequirement; keep the two in step.
// +kubebuilder:validation:XValidation:rule=`self.operator != 'In' || (has(self.values) && size(self.values) > 0)`,message="In needs at least one value; list the allowed values or use Exists to allow any",fieldPath=".values"
// +kubebuilder:validation:XValidation:rule=`!(self.operator in ['Exists', 'DoesNotExist']) || !has(self.values) || size(self.values) == 0`,message="Exists and DoesNotExist take no values; remove them",fieldPath=".values"
// +kubebuilder:validation:XValidation:rule=`!(self.operator in ['Gt', 'Lt', 'Gte', 'Lte']) || (has(self.values) && size(self.values) == 1 && self.values[0].matches(r'^[0-9]+$'))`,message="Gt, Lt, Gte and Lte take exactly one non-negative integer value, e.g. [\"4\"]",fieldPath=".values"
// +kubebuilder:validation:XValidation:rule=`self.operator != 'In' || !has(self.minValues) || (has(self.values) && size(self.values) >= self.minValues)`,message="minValues asks for more values than are listed; list more values or lower minValues",fieldPath=".minValues"
// +kubebuilder:validation:XValidation:rule=`!(self.key in ['stowage.dev/capacity-type', 'karpenter.sh/capacity-type']) || self.operator != 'In' || !has(self.values) || self.values.all(v, v in ['reserved', 'spot', 'on-demand'])`,message="stowage.dev/capacity-type (and karpenter.sh/capacity-type) values must be reserved, spot or on-demand",fieldPath=".values"
type NodeSelectorRequirementWithMinValues struct {
	// Key is the node label the requirement applies to: a qualified name such as
	// topology.kubernetes.io/zone or example.com/team.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:XValidation:rule=`!format.qualifiedName().validate(self).hasValue()`,message="key must be a qualified name such as example.com/team: an optional DNS subdomain prefix and '/', then up to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
	Key string `json:"key"`
	// Operator is one of In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte.
	// +kubebuilder:validation:Enum=In;NotIn;Exists;DoesNotExist;Gt;Lt;Gte;Lte
	Operator string `json:"operator"`
	// Values are the label values; one integer for Gt, Lt, Gte and Lte, none for Exists and DoesNotExist.
	// ---
	// That they are label values is checked on the NodePool and NodeClaim lists, not here: a
	// rule here would also run on NodeClass status.amis and exceed the API server's CEL cost budget.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=63
	Values []string `json:"values,omitempty"`
	// MinValues is the least number of distinct values that must remain for this key.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=50
	MinValues *int `json:"minValues,omitempty"`
}

// NodeClassReference points at the NodeClass a pool's nodes are launched with.
type NodeClassReference struct {
	// Group of the node class, stowage.dev.
	// +kubebuilder:default=stowage.dev
	// +kubebuilder:validation:XValidation:rule=`self in ['', 'stowage.dev']`,message="group must be stowage.dev, the group of NodeClass; leave it out to get the default"
	Group string `json:"group"`
	// Kind of the node class, NodeClass.
	// +kubebuilder:default=NodeClass
	// +kubebuilder:validation:XValidation:rule=`self in ['', 'NodeClass']`,message="kind must be NodeClass; leave it out to get the default"
	Kind string `json:"kind"`
	// Name of the node class.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}
