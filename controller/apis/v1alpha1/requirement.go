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
type NodeSelectorRequirementWithMinValues struct {
	// Key is the node label the requirement applies to.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	Key string `json:"key"`
	// Operator is one of In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte.
	// +kubebuilder:validation:Enum=In;NotIn;Exists;DoesNotExist;Gt;Lt;Gte;Lte
	Operator string `json:"operator"`
	// Values are the label values; one integer for Gt, Lt, Gte and Lte, none for Exists and DoesNotExist.
	// +optional
	// +kubebuilder:validation:MaxItems=100
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
	Group string `json:"group"`
	// Kind of the node class, NodeClass.
	// +kubebuilder:default=NodeClass
	Kind string `json:"kind"`
	// Name of the node class.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}
