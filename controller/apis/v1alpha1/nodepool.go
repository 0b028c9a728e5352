package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodePool is a capacity policy: which instance types, zones and capacity types its
// nodes may use, how they are labelled and tainted, how much it may launch in all,
// and when its nodes may be disrupted.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=nodepools,scope=Cluster,categories=stowage
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="NodeClass",type=string,JSONPath=`.spec.template.spec.nodeClassRef.name`
// +kubebuilder:printcolumn:name="Nodes",type=string,JSONPath=`.status.resources.nodes`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Weight",type=integer,JSONPath=`.spec.weight`,priority=0
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type NodePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   NodePoolSpec   `json:"spec"`
	Status NodePoolStatus `json:"status,omitempty"`
}

// NodePoolSpec is the desired shape of a pool's nodes.
type NodePoolSpec struct {
	// Template describes the NodeClaims this pool creates.
	Template NodeClaimTemplate `json:"template"`
	// Disruption says when and how fast this pool's nodes may be replaced or removed.
	// +optional
	Disruption Disruption `json:"disruption,omitempty"`
	// Limits caps the total resources of the pool's nodes (cpu, memory, nodes, any extended resource).
	// +optional
	Limits corev1.ResourceList `json:"limits,omitempty"`
	// Weight orders pools: a higher weight is tried first.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	Weight *int32 `json:"weight,omitempty"`
}

// NodeClaimTemplate is the part of a NodeClaim a pool fixes.
type NodeClaimTemplate struct {
	// +optional
	ObjectMeta TemplateObjectMeta    `json:"metadata,omitempty"`
	Spec       NodeClaimTemplateSpec `json:"spec"`
}

// TemplateObjectMeta holds the labels and annotations put on every node of the pool.
type TemplateObjectMeta struct {
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// NodeClaimTemplateSpec is the scheduling and lifetime part of a pool's NodeClaims.
type NodeClaimTemplateSpec struct {
	// Requirements constrain the instance types, zones and capacity types of the pool's nodes.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	Requirements []NodeSelectorRequirementWithMinValues `json:"requirements,omitempty"`
	// Taints are put on every node; pods must tolerate them to land there.
	// +optional
	Taints []corev1.Taint `json:"taints,omitempty"`
	// StartupTaints are expected on new nodes and removed by another agent (a CNI, a GPU operator);
	// they do not keep pods from being scheduled onto a node being launched.
	// +optional
	StartupTaints []corev1.Taint `json:"startupTaints,omitempty"`
	// NodeClassRef names the NodeClass the nodes are launched with.
	NodeClassRef *NodeClassReference `json:"nodeClassRef"`
	// ExpireAfter is the age at which a node is replaced; Never keeps nodes forever.
	// +optional
	ExpireAfter *NillableDuration `json:"expireAfter,omitempty"`
	// TerminationGracePeriod bounds how long a drain may wait on PDBs and do-not-disrupt pods.
	// +optional
	TerminationGracePeriod *metav1.Duration `json:"terminationGracePeriod,omitempty"`
}

// Consolidation policies.
const (
	ConsolidationPolicyWhenEmpty                = "WhenEmpty"
	ConsolidationPolicyWhenEmptyOrUnderutilized = "WhenEmptyOrUnderutilized"
)

// Disruption reasons a budget may name.
const (
	DisruptionReasonEmpty         = "Empty"
	DisruptionReasonUnderutilized = "Underutilized"
	DisruptionReasonDrifted       = "Drifted"
	DisruptionReasonExpired       = "Expired"
)

// DisruptionReasons lists every reason a budget may name.
var DisruptionReasons = []string{DisruptionReasonEmpty, DisruptionReasonUnderutilized, DisruptionReasonDrifted, DisruptionReasonExpired}

// Disruption configures consolidation and the budgets that bound every voluntary disruption.
type Disruption struct {
	// ConsolidationPolicy is WhenEmpty or WhenEmptyOrUnderutilized.
	// +optional
	// +kubebuilder:validation:Enum=WhenEmpty;WhenEmptyOrUnderutilized
	ConsolidationPolicy string `json:"consolidationPolicy,omitempty"`
	// ConsolidateAfter is how long a node must stay consolidatable before it is acted on; Never disables consolidation.
	// +optional
	ConsolidateAfter *NillableDuration `json:"consolidateAfter,omitempty"`
	// Budgets cap how many nodes may be disrupted at once; the most restrictive active budget wins.
	// +optional
	// +kubebuilder:validation:MaxItems=50
	Budgets []Budget `json:"budgets,omitempty"`
}

// Budget allows at most Nodes nodes (a count or a percentage) to be disrupted at once,
// for the given reasons, during the schedule's windows (always, without a schedule).
type Budget struct {
	// Nodes is a count ("3") or a percentage of the pool's nodes ("10%").
	// +kubebuilder:validation:Pattern=`^((100|[0-9]{1,2})%|[0-9]+)$`
	// +kubebuilder:default="10%"
	Nodes string `json:"nodes"`
	// Schedule is a cron expression (UTC) opening the budget's window; it needs Duration.
	// +optional
	Schedule *string `json:"schedule,omitempty"`
	// Duration is how long the window stays open after each Schedule firing.
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`
	// Reasons the budget applies to; all of them when empty.
	// +optional
	Reasons []string `json:"reasons,omitempty"`
}

// NodePoolStatus reports what the pool has launched.
type NodePoolStatus struct {
	// Resources sums the capacity of the pool's nodes, plus a "nodes" count.
	// +optional
	Resources corev1.ResourceList `json:"resources,omitempty"`
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// NodePoolList is a list of NodePools.
// +kubebuilder:object:root=true
type NodePoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodePool `json:"items"`
}
