package karpenter

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// The Karpenter v1 objects as `kubectl get -o yaml` prints them: every field
// of the v1 API (karpenter.sh/v1 NodePool and NodeClaim, karpenter.k8s.aws/v1
// EC2NodeClass), so that a field this converter does not know is reported as
// such rather than lost. Status is kept raw: it is what Karpenter observed,
// not configuration.

// NodePool is karpenter.sh/v1 NodePool.
type NodePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              NodePoolSpec    `json:"spec"`
	Status            json.RawMessage `json:"status,omitempty"`
}

// NodePoolSpec is a NodePool's spec.
type NodePoolSpec struct {
	Template   NodeClaimTemplate   `json:"template"`
	Disruption *Disruption         `json:"disruption,omitempty"`
	Limits     corev1.ResourceList `json:"limits,omitempty"`
	Weight     *int32              `json:"weight,omitempty"`
	// Replicas makes a static NodePool (Karpenter 1.7 and later).
	Replicas *int64 `json:"replicas,omitempty"`
}

// NodeClaimTemplate is a NodePool's template.
type NodeClaimTemplate struct {
	ObjectMeta TemplateMeta  `json:"metadata,omitempty"`
	Spec       NodeClaimSpec `json:"spec"`
}

// TemplateMeta is a template's labels and annotations.
type TemplateMeta struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// NodeClaimSpec is a template's (or a NodeClaim's) spec.
type NodeClaimSpec struct {
	Taints                 []corev1.Taint                                  `json:"taints,omitempty"`
	StartupTaints          []corev1.Taint                                  `json:"startupTaints,omitempty"`
	Requirements           []v1alpha1.NodeSelectorRequirementWithMinValues `json:"requirements,omitempty"`
	Resources              *ResourceRequirements                           `json:"resources,omitempty"`
	NodeClassRef           *NodeClassReference                             `json:"nodeClassRef,omitempty"`
	ExpireAfter            *v1alpha1.NillableDuration                      `json:"expireAfter,omitempty"`
	TerminationGracePeriod *metav1.Duration                                `json:"terminationGracePeriod,omitempty"`
}

// ResourceRequirements are a NodeClaim's requests.
type ResourceRequirements struct {
	Requests corev1.ResourceList `json:"requests,omitempty"`
}

// NodeClassReference points at an EC2NodeClass.
type NodeClassReference struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
	Name  string `json:"name"`
}

// Disruption is a NodePool's disruption block.
type Disruption struct {
	ConsolidationPolicy string                     `json:"consolidationPolicy,omitempty"`
	ConsolidateAfter    *v1alpha1.NillableDuration `json:"consolidateAfter,omitempty"`
	Budgets             []v1alpha1.Budget          `json:"budgets,omitempty"`
}

// NodeClaim is karpenter.sh/v1 NodeClaim.
type NodeClaim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              NodeClaimSpec   `json:"spec"`
	Status            NodeClaimStatus `json:"status,omitempty"`
}

// NodeClaimStatus is what Karpenter observed of a NodeClaim.
type NodeClaimStatus struct {
	NodeName         string              `json:"nodeName,omitempty"`
	ProviderID       string              `json:"providerID,omitempty"`
	ImageID          string              `json:"imageID,omitempty"`
	Capacity         corev1.ResourceList `json:"capacity,omitempty"`
	Allocatable      corev1.ResourceList `json:"allocatable,omitempty"`
	Conditions       []metav1.Condition  `json:"conditions,omitempty"`
	LastPodEventTime metav1.Time         `json:"lastPodEventTime,omitempty"`
}

// EC2NodeClass is karpenter.k8s.aws/v1 EC2NodeClass.
type EC2NodeClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              EC2NodeClassSpec `json:"spec"`
	Status            json.RawMessage  `json:"status,omitempty"`
}

// EC2NodeClassSpec is an EC2NodeClass's spec.
type EC2NodeClassSpec struct {
	SubnetSelectorTerms              []v1alpha1.SelectorTerm                    `json:"subnetSelectorTerms,omitempty"`
	SecurityGroupSelectorTerms       []v1alpha1.SecurityGroupSelectorTerm       `json:"securityGroupSelectorTerms,omitempty"`
	CapacityReservationSelectorTerms []v1alpha1.CapacityReservationSelectorTerm `json:"capacityReservationSelectorTerms,omitempty"`
	AssociatePublicIPAddress         *bool                                      `json:"associatePublicIPAddress,omitempty"`
	IPPrefixCount                    *int32                                     `json:"ipPrefixCount,omitempty"`
	AMISelectorTerms                 []AMISelectorTerm                          `json:"amiSelectorTerms,omitempty"`
	AMIFamily                        *string                                    `json:"amiFamily,omitempty"`
	UserData                         *string                                    `json:"userData,omitempty"`
	Role                             string                                     `json:"role,omitempty"`
	InstanceProfile                  *string                                    `json:"instanceProfile,omitempty"`
	Tags                             map[string]string                          `json:"tags,omitempty"`
	Kubelet                          *v1alpha1.KubeletConfiguration             `json:"kubelet,omitempty"`
	BlockDeviceMappings              []BlockDeviceMapping                       `json:"blockDeviceMappings,omitempty"`
	InstanceStorePolicy              *string                                    `json:"instanceStorePolicy,omitempty"`
	DetailedMonitoring               *bool                                      `json:"detailedMonitoring,omitempty"`
	MetadataOptions                  *v1alpha1.MetadataOptions                  `json:"metadataOptions,omitempty"`
	EnclaveOptions                   *EnclaveOptions                            `json:"enclaveOptions,omitempty"`
	Context                          *string                                    `json:"context,omitempty"`
}

// AMISelectorTerm is Karpenter's image term: Stowage's plus ssmParameter.
type AMISelectorTerm struct {
	Alias        string            `json:"alias,omitempty"`
	Tags         map[string]string `json:"tags,omitempty"`
	ID           string            `json:"id,omitempty"`
	Name         string            `json:"name,omitempty"`
	Owner        string            `json:"owner,omitempty"`
	SSMParameter string            `json:"ssmParameter,omitempty"`
}

// BlockDeviceMapping is Karpenter's, whose EBS side has volumeInitializationRate.
type BlockDeviceMapping struct {
	DeviceName *string      `json:"deviceName,omitempty"`
	EBS        *BlockDevice `json:"ebs,omitempty"`
	RootVolume bool         `json:"rootVolume,omitempty"`
}

// BlockDevice is an EBS volume.
type BlockDevice struct {
	DeleteOnTermination      *bool              `json:"deleteOnTermination,omitempty"`
	Encrypted                *bool              `json:"encrypted,omitempty"`
	IOPS                     *int64             `json:"iops,omitempty"`
	KMSKeyID                 *string            `json:"kmsKeyID,omitempty"`
	SnapshotID               *string            `json:"snapshotID,omitempty"`
	Throughput               *int64             `json:"throughput,omitempty"`
	VolumeInitializationRate *int32             `json:"volumeInitializationRate,omitempty"`
	VolumeSize               *resource.Quantity `json:"volumeSize,omitempty"`
	VolumeType               *string            `json:"volumeType,omitempty"`
}

// EnclaveOptions turns on Nitro Enclaves.
type EnclaveOptions struct {
	Enabled *bool `json:"enabled,omitempty"`
}
