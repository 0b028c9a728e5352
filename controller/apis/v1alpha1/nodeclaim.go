package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeClaim is one node Stowage launched or is launching: the request (requirements,
// resources) and what the cloud gave (provider id, instance type, zone, capacity type).
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=nodeclaims,scope=Cluster,categories=stowage
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.metadata.labels.node\.kubernetes\.io/instance-type`
// +kubebuilder:printcolumn:name="Capacity",type=string,JSONPath=`.metadata.labels.stowage\.dev/capacity-type`
// +kubebuilder:printcolumn:name="Zone",type=string,JSONPath=`.metadata.labels.topology\.kubernetes\.io/zone`
// +kubebuilder:printcolumn:name="Node",type=string,JSONPath=`.status.nodeName`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type NodeClaim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   NodeClaimSpec   `json:"spec"`
	Status NodeClaimStatus `json:"status,omitempty"`
}

// NodeClaimSpec is what the node must satisfy.
type NodeClaimSpec struct {
	// +optional
	Taints []corev1.Taint `json:"taints,omitempty"`
	// +optional
	StartupTaints []corev1.Taint `json:"startupTaints,omitempty"`
	// Requirements the launched instance must meet; the instance-type requirement lists the fallbacks.
	// +optional
	Requirements []NodeSelectorRequirementWithMinValues `json:"requirements,omitempty"`
	// Resources the node must offer: the pods' requests plus DaemonSet overhead.
	// +optional
	Resources    ResourceRequirements `json:"resources,omitempty"`
	NodeClassRef *NodeClassReference  `json:"nodeClassRef"`
	// +optional
	ExpireAfter *NillableDuration `json:"expireAfter,omitempty"`
	// +optional
	TerminationGracePeriod *metav1.Duration `json:"terminationGracePeriod,omitempty"`
}

// ResourceRequirements are the minimum resources a NodeClaim's node must have.
type ResourceRequirements struct {
	// +optional
	Requests corev1.ResourceList `json:"requests,omitempty"`
}

// NodeClaim condition types, in the order a claim passes through them.
const (
	ConditionLaunched    = "Launched"
	ConditionRegistered  = "Registered"
	ConditionInitialized = "Initialized"
	ConditionReady       = "Ready"
	ConditionDrifted     = "Drifted"
	ConditionDisrupting  = "Disrupting"
	ConditionInterrupted = "Interrupted"
)

// NodeClaimStatus is what the cloud and the node reported.
type NodeClaimStatus struct {
	// +optional
	NodeName string `json:"nodeName,omitempty"`
	// +optional
	ProviderID string `json:"providerID,omitempty"`
	// +optional
	ImageID string `json:"imageID,omitempty"`
	// +optional
	Capacity corev1.ResourceList `json:"capacity,omitempty"`
	// +optional
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// LastPodEventTime is when a pod last landed on or left the node; consolidation waits on it.
	// +optional
	LastPodEventTime metav1.Time `json:"lastPodEventTime,omitempty"`
}

// NodeClaimList is a list of NodeClaims.
// +kubebuilder:object:root=true
type NodeClaimList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodeClaim `json:"items"`
}
