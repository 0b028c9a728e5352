package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CapacityBuffer keeps spare capacity ready for pods that do not exist yet:
// chunks of the shape a PodTemplate (podTemplateRef) or a workload
// (scalableRef) gives, as many as replicas, percentage and limits say. An
// autoscaler provisions for virtual pods of that shape so that real pods of
// it start without waiting for a node.
// +kubebuilder:object:root=true
type CapacityBuffer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   CapacityBufferSpec   `json:"spec"`
	Status CapacityBufferStatus `json:"status,omitempty"`
}

// CapacityBufferSpec is what the buffer keeps.
type CapacityBufferSpec struct {
	// ProvisioningStrategy is ActiveCapacity (the CRD's default): nodes are
	// launched for the chunks.
	ProvisioningStrategy *string `json:"provisioningStrategy,omitempty"`
	// PodTemplateRef names a PodTemplate in the buffer's namespace, the shape
	// of one chunk; exclusive with ScalableRef.
	PodTemplateRef *LocalObjectRef `json:"podTemplateRef,omitempty"`
	// ScalableRef names a workload (Deployment, StatefulSet, ReplicaSet,
	// Job) whose pod template is the chunk's shape.
	ScalableRef *ScalableRef `json:"scalableRef,omitempty"`
	// Replicas is how many chunks to keep; with Percentage, the larger.
	Replicas *int32 `json:"replicas,omitempty"`
	// Percentage of the workload's replicas, rounded up to at least one.
	Percentage *int32 `json:"percentage,omitempty"`
	// Limits cap the chunks' total requests; alone, as many chunks as fit.
	Limits corev1.ResourceList `json:"limits,omitempty"`
}

// LocalObjectRef names an object in the buffer's namespace.
type LocalObjectRef struct {
	Name string `json:"name"`
}

// ScalableRef names a workload in the buffer's namespace.
type ScalableRef struct {
	// APIGroup is the workload's group; empty for the core group.
	APIGroup string `json:"apiGroup,omitempty"`
	Kind     string `json:"kind"`
	Name     string `json:"name"`
}

// CapacityBufferStatus is what the buffer controller resolved and the
// autoscaler did.
type CapacityBufferStatus struct {
	// PodTemplateRef is the PodTemplate the chunks were built from (only for
	// a podTemplateRef buffer).
	PodTemplateRef *LocalObjectRef `json:"podTemplateRef,omitempty"`
	// Replicas is how many chunks are kept.
	Replicas *int32 `json:"replicas,omitempty"`
	// PodTemplateGeneration is the generation of that PodTemplate.
	PodTemplateGeneration *int64 `json:"podTemplateGeneration,omitempty"`
	// Conditions: ReadyForProvisioning, Provisioning, LimitedByQuotas.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ProvisioningStrategy is the strategy acted on.
	ProvisioningStrategy *string `json:"provisioningStrategy,omitempty"`
}

// CapacityBufferList is a list of CapacityBuffers.
// +kubebuilder:object:root=true
type CapacityBufferList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CapacityBuffer `json:"items"`
}

// The strategy, condition types and reasons Cluster Autoscaler writes
// (cluster-autoscaler/capacitybuffer), which Stowage writes alike.
const (
	ActiveCapacity = "buffer.x-k8s.io/active-capacity"

	ConditionReadyForProvisioning = "ReadyForProvisioning"
	ConditionProvisioning         = "Provisioning"
	ConditionLimitedByQuotas      = "LimitedByQuotas"

	ReasonAttributesSetSuccessfully = "AttributesSetSuccessfully"
	ReasonResourceQuotasAllocated   = "ResourceQuotasAllocated"
)

// Kinds a scalableRef may name.
const (
	KindDeployment  = "Deployment"
	KindStatefulSet = "StatefulSet"
	KindReplicaSet  = "ReplicaSet"
	KindJob         = "Job"
)
