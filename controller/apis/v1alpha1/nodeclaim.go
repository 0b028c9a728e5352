package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeClaim is one node Stowage launched or is launching: the request (requirements,
// resources) and what the cloud gave (provider id, instance type, zone, capacity type).
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=nodeclaims,scope=Cluster,categories=stowage,shortName=nc
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.metadata.labels.node\.kubernetes\.io/instance-type`
// +kubebuilder:printcolumn:name="Capacity",type=string,JSONPath=`.metadata.labels.stowage\.dev/capacity-type`
// +kubebuilder:printcolumn:name="Zone",type=string,JSONPath=`.metadata.labels.topology\.kubernetes\.io/zone`
// +kubebuilder:printcolumn:name="Node",type=string,JSONPath=`.status.nodeName`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.providerID`,priority=1
// +kubebuilder:printcolumn:name="NodePool",type=string,JSONPath=`.metadata.labels.stowage\.dev/nodepool`,priority=1
type NodeClaim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   NodeClaimSpec   `json:"spec"`
	Status NodeClaimStatus `json:"status,omitempty"`
}

// NodeClaimSpec is what the node must satisfy.
type NodeClaimSpec struct {
	// Taints are put on the node.
	// ---
	// The rules mirror validateTaints, except that keys and values are only measured: corev1.Taint's
	// strings have no maxLength, and a pattern on them would exceed the API server's CEL cost budget.
	// +optional
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:XValidation:rule=`self.all(t, t.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])`,message="each taint's effect must be NoSchedule, PreferNoSchedule or NoExecute"
	// +kubebuilder:validation:XValidation:rule=`self.all(t, size(t.key) > 0 && size(t.key) <= 317)`,message="each taint's key must be a qualified name such as example.com/dedicated"
	// +kubebuilder:validation:XValidation:rule=`self.all(t, !has(t.value) || size(t.value) <= 63)`,message="each taint's value must be empty or up to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
	Taints []corev1.Taint `json:"taints,omitempty"`
	// StartupTaints are expected on the new node and removed by another agent.
	// ---
	// The rules mirror validateTaints, except that keys and values are only measured: corev1.Taint's
	// strings have no maxLength, and a pattern on them would exceed the API server's CEL cost budget.
	// +optional
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:XValidation:rule=`self.all(t, t.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])`,message="each taint's effect must be NoSchedule, PreferNoSchedule or NoExecute"
	// +kubebuilder:validation:XValidation:rule=`self.all(t, size(t.key) > 0 && size(t.key) <= 317)`,message="each taint's key must be a qualified name such as example.com/dedicated"
	// +kubebuilder:validation:XValidation:rule=`self.all(t, !has(t.value) || size(t.value) <= 63)`,message="each taint's value must be empty or up to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
	StartupTaints []corev1.Taint `json:"startupTaints,omitempty"`
	// Requirements the launched instance must meet; the instance-type requirement lists the fallbacks.
	// ---
	// Unlike a pool's, a claim's requirements may name stowage.dev/nodepool and any label a pod selects on.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:XValidation:rule=`self.all(r, !has(r.values) || r.values.all(v, !format.labelValue().validate(v).hasValue()))`,message="requirements values must be label values: empty, or up to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
	Requirements []NodeSelectorRequirementWithMinValues `json:"requirements,omitempty"`
	// Resources the node must offer: the pods' requests plus DaemonSet overhead.
	// +optional
	Resources ResourceRequirements `json:"resources,omitempty"`
	// NodeClassRef names the NodeClass the node is launched with.
	NodeClassRef *NodeClassReference `json:"nodeClassRef"`
	// ExpireAfter is the age at which the node is replaced; Never keeps it forever.
	// +optional
	ExpireAfter *NillableDuration `json:"expireAfter,omitempty"`
	// TerminationGracePeriod bounds how long a drain may wait on PDBs and do-not-disrupt pods.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule=`self.matches(r'^[+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$')`,message="terminationGracePeriod must be a duration such as 30s, 10m or 48h"
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
	// ConditionInstanceTerminating: the claim's node is drained and the
	// cloud accepted its instance's termination. Disruption budgets no
	// longer count the node (Karpenter's rule): nothing of it is left to
	// disrupt while the instance shuts down.
	ConditionInstanceTerminating = "InstanceTerminating"
)

// NodeClaimStatus is what the cloud and the node reported.
type NodeClaimStatus struct {
	// NodeName is the name of the Node the instance registered as.
	// +optional
	NodeName string `json:"nodeName,omitempty"`
	// ProviderID is the cloud's id of the instance, aws:///<zone>/<instance id>.
	// +optional
	ProviderID string `json:"providerID,omitempty"`
	// +optional
	ImageID string `json:"imageID,omitempty"`
	// +optional
	Capacity corev1.ResourceList `json:"capacity,omitempty"`
	// +optional
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`
	// Conditions follow the claim from Launched to Ready; the Ready condition is printed by kubectl.
	// +optional
	// +listType=map
	// +listMapKey=type
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
