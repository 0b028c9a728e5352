package v1alpha1

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeClass is the EC2 side of a node: image, network, IAM, disks, metadata
// options, user data and kubelet settings.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=nodeclasses,scope=Cluster,categories=stowage,shortName=nclass
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type NodeClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   NodeClassSpec   `json:"spec"`
	Status NodeClassStatus `json:"status,omitempty"`
}

// NodeClassSpec is how nodes are launched on EC2.
// ---
// The CEL rules here and on the types below mirror NodeClass.Validate; keep them in step.
// +kubebuilder:validation:XValidation:rule=`(has(self.role) && size(self.role) > 0) != has(self.instanceProfile)`,message="set exactly one of role and instanceProfile",fieldPath=".role"
// +kubebuilder:validation:XValidation:rule=`!has(self.amiFamily) || self.amiFamily == 'Custom' || !self.amiSelectorTerms.exists(t, has(t.alias) && size(t.alias) > 0) || self.amiSelectorTerms.exists(t, has(t.alias) && t.alias.startsWith(self.amiFamily.lowerAscii() + '@'))`,message="with an alias, amiFamily must be the alias's family or Custom; remove amiFamily to use the alias's",fieldPath=".amiFamily"
type NodeClassSpec struct {
	// AMISelectorTerms pick the image: an alias (al2023@latest, bottlerocket@v1.20.0), tags, a name or an id.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=30
	// +kubebuilder:validation:XValidation:rule=`size(self) == 1 || !self.exists(t, has(t.alias) && size(t.alias) > 0)`,message="a term with an alias must be the only term; remove the other terms or the alias"
	AMISelectorTerms []AMISelectorTerm `json:"amiSelectorTerms"`
	// AMIFamily is how nodes of images selected by id, name or tags bootstrap:
	// AL2023 (nodeadm), Bottlerocket (TOML settings), or Custom (userData as
	// written, nothing added). With an alias it is the alias's family; Custom
	// when unset without one.
	// +optional
	// +kubebuilder:validation:Enum=AL2023;Bottlerocket;Custom
	AMIFamily *string `json:"amiFamily,omitempty"`
	// SubnetSelectorTerms pick the subnets (and so the zones) nodes launch into.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=30
	SubnetSelectorTerms []SelectorTerm `json:"subnetSelectorTerms"`
	// SecurityGroupSelectorTerms pick the security groups of the nodes.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=30
	SecurityGroupSelectorTerms []SecurityGroupSelectorTerm `json:"securityGroupSelectorTerms"`
	// Role is the IAM role of the nodes; Stowage manages an instance profile for it. Exclusive with InstanceProfile.
	// +optional
	Role string `json:"role,omitempty"`
	// InstanceProfile is an existing instance profile. Exclusive with Role.
	// +optional
	InstanceProfile *string `json:"instanceProfile,omitempty"`
	// BlockDeviceMappings are the node's EBS volumes; the AMI family's root volume when empty.
	// +optional
	// +kubebuilder:validation:MaxItems=50
	BlockDeviceMappings []BlockDeviceMapping `json:"blockDeviceMappings,omitempty"`
	// MetadataOptions configure IMDS; IMDSv2 is required and the hop limit is 1 by default.
	// +optional
	// +kubebuilder:default={httpEndpoint: enabled, httpProtocolIPv6: disabled, httpPutResponseHopLimit: 1, httpTokens: required}
	MetadataOptions *MetadataOptions `json:"metadataOptions,omitempty"`
	// UserData is merged with the bootstrap Stowage generates for the AMI family.
	// +optional
	UserData *string `json:"userData,omitempty"`
	// Tags are put on instances, volumes and launch templates.
	// +optional
	Tags map[string]string `json:"tags,omitempty"`
	// Kubelet settings; they change the nodes' allocatable resources.
	// +optional
	Kubelet *KubeletConfiguration `json:"kubelet,omitempty"`
	// AssociatePublicIPAddress overrides the subnet's setting.
	// +optional
	AssociatePublicIPAddress *bool `json:"associatePublicIPAddress,omitempty"`
	// DetailedMonitoring turns on one-minute CloudWatch metrics.
	// +optional
	DetailedMonitoring *bool `json:"detailedMonitoring,omitempty"`
	// InstanceStorePolicy RAID0 joins the instance's local NVMe disks into one
	// RAID-0 array for the kubelet and containerd: ephemeral storage is then the
	// instance store, not the root volume, on types that have one.
	// +optional
	// +kubebuilder:validation:Enum=RAID0
	InstanceStorePolicy *string `json:"instanceStorePolicy,omitempty"`
	// CapacityReservationSelectorTerms select the On-Demand Capacity
	// Reservations and Capacity Blocks the nodes may launch into (capacity
	// type reserved); none when empty, whatever reservations the account has.
	// +optional
	// +kubebuilder:validation:MaxItems=30
	CapacityReservationSelectorTerms []CapacityReservationSelectorTerm `json:"capacityReservationSelectorTerms,omitempty"`
}

// Values of NodeClassSpec.AMIFamily.
const (
	AMIFamilyAL2023       = "AL2023"
	AMIFamilyBottlerocket = "Bottlerocket"
	AMIFamilyCustom       = "Custom"
)

// AMIFamilyNames are the values amiFamily accepts.
var AMIFamilyNames = []string{AMIFamilyAL2023, AMIFamilyBottlerocket, AMIFamilyCustom}

// BootstrapFamily is how the class's nodes bootstrap, in lower case (al2023,
// bottlerocket, custom): its amiFamily when set (Custom, or the family of
// images selected by id, name or tags), else its alias's family, else custom.
func (s *NodeClassSpec) BootstrapFamily() string {
	if f := s.AMIFamily; f != nil {
		return strings.ToLower(*f)
	}
	for _, t := range s.AMISelectorTerms {
		if f, _, ok := strings.Cut(t.Alias, "@"); ok {
			return f
		}
	}
	return strings.ToLower(AMIFamilyCustom)
}

// InstanceStorePolicyRAID0 is the one instanceStorePolicy.
const InstanceStorePolicyRAID0 = "RAID0"

// CapacityReservationSelectorTerm selects reservations; its fields are ANDed,
// terms are ORed.
// +kubebuilder:validation:XValidation:rule=`(has(self.tags) && size(self.tags) > 0) || (has(self.id) && size(self.id) > 0) || (has(self.instanceMatchCriteria) && size(self.instanceMatchCriteria) > 0)`,message="each capacityReservationSelectorTerm must set tags, id or instanceMatchCriteria"
// +kubebuilder:validation:XValidation:rule=`!(has(self.id) && size(self.id) > 0) || !((has(self.tags) && size(self.tags) > 0) || (has(self.ownerID) && size(self.ownerID) > 0) || (has(self.instanceMatchCriteria) && size(self.instanceMatchCriteria) > 0))`,message="id selects one reservation on its own; remove tags, ownerID and instanceMatchCriteria from this term",fieldPath=".id"
type CapacityReservationSelectorTerm struct {
	// Tags select reservations carrying every one of these tags.
	// +optional
	// +kubebuilder:validation:MaxProperties=20
	// +kubebuilder:validation:XValidation:rule=`self.all(k, k != '' && self[k] != '')`,message="tag keys and values must not be empty; use \"*\" to match any value"
	Tags map[string]string `json:"tags,omitempty"`
	// ID is one reservation's id.
	// +optional
	// +kubebuilder:validation:Pattern=`^cr-[0-9a-z]+$`
	ID string `json:"id,omitempty"`
	// OwnerID is the account that owns the reservation (one shared with this one).
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]{12}$`
	OwnerID string `json:"ownerID,omitempty"`
	// InstanceMatchCriteria is open or targeted.
	// +optional
	// +kubebuilder:validation:Enum=open;targeted
	InstanceMatchCriteria string `json:"instanceMatchCriteria,omitempty"`
}

// AMISelectorTerm selects images. Alias is exclusive with every other field.
// +kubebuilder:validation:XValidation:rule=`(has(self.alias) && size(self.alias) > 0) || (has(self.tags) && size(self.tags) > 0) || (has(self.id) && size(self.id) > 0) || (has(self.name) && size(self.name) > 0)`,message="each amiSelectorTerm must set alias, tags, id or name"
// +kubebuilder:validation:XValidation:rule=`!(has(self.alias) && size(self.alias) > 0) || !((has(self.tags) && size(self.tags) > 0) || (has(self.id) && size(self.id) > 0) || (has(self.name) && size(self.name) > 0) || (has(self.owner) && size(self.owner) > 0))`,message="an alias must be the only field of its term; remove tags, id, name and owner",fieldPath=".alias"
type AMISelectorTerm struct {
	// Alias is family@version: al2023@latest, bottlerocket@latest, al2023@v20240625.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule=`self == '' || self.matches(r'^(al2023|bottlerocket)@.+$')`,message="alias must be family@version with family al2023 or bottlerocket, e.g. al2023@latest"
	Alias string `json:"alias,omitempty"`
	// Tags select images carrying every one of these tags.
	// +optional
	// +kubebuilder:validation:MaxProperties=20
	// +kubebuilder:validation:XValidation:rule=`self.all(k, k != '' && self[k] != '')`,message="tag keys and values must not be empty; use \"*\" to match any value"
	Tags map[string]string `json:"tags,omitempty"`
	// +optional
	// +kubebuilder:validation:Pattern=`^ami-[0-9a-z]+$`
	ID string `json:"id,omitempty"`
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Owner string `json:"owner,omitempty"`
}

// SelectorTerm selects subnets by tags or by id.
// +kubebuilder:validation:XValidation:rule=`(has(self.tags) && size(self.tags) > 0) || (has(self.id) && size(self.id) > 0)`,message="each subnetSelectorTerm must set tags or id"
// +kubebuilder:validation:XValidation:rule=`!(has(self.id) && size(self.id) > 0) || !(has(self.tags) && size(self.tags) > 0)`,message="id selects one subnet on its own; remove tags from this term",fieldPath=".id"
type SelectorTerm struct {
	// Tags select subnets carrying every one of these tags.
	// +optional
	// +kubebuilder:validation:MaxProperties=20
	// +kubebuilder:validation:XValidation:rule=`self.all(k, k != '' && self[k] != '')`,message="tag keys and values must not be empty; use \"*\" to match any value"
	Tags map[string]string `json:"tags,omitempty"`
	// +optional
	// +kubebuilder:validation:Pattern=`^subnet-[0-9a-z]+$`
	ID string `json:"id,omitempty"`
}

// SecurityGroupSelectorTerm selects security groups by tags, id or name.
// +kubebuilder:validation:XValidation:rule=`(has(self.tags) && size(self.tags) > 0) || (has(self.id) && size(self.id) > 0) || (has(self.name) && size(self.name) > 0)`,message="each securityGroupSelectorTerm must set tags, id or name"
// +kubebuilder:validation:XValidation:rule=`!(has(self.id) && size(self.id) > 0) || !((has(self.tags) && size(self.tags) > 0) || (has(self.name) && size(self.name) > 0))`,message="id selects one security group on its own; remove tags and name from this term",fieldPath=".id"
type SecurityGroupSelectorTerm struct {
	// Tags select security groups carrying every one of these tags.
	// +optional
	// +kubebuilder:validation:MaxProperties=20
	// +kubebuilder:validation:XValidation:rule=`self.all(k, k != '' && self[k] != '')`,message="tag keys and values must not be empty; use \"*\" to match any value"
	Tags map[string]string `json:"tags,omitempty"`
	// +optional
	// +kubebuilder:validation:Pattern=`^sg-[0-9a-z]+$`
	ID string `json:"id,omitempty"`
	// +optional
	Name string `json:"name,omitempty"`
}

// BlockDeviceMapping is one EBS volume of a node.
type BlockDeviceMapping struct {
	// +optional
	DeviceName *string `json:"deviceName,omitempty"`
	// +optional
	EBS *BlockDevice `json:"ebs,omitempty"`
	// RootVolume marks the volume that backs ephemeral storage.
	// +optional
	RootVolume bool `json:"rootVolume,omitempty"`
}

// BlockDevice is the EBS side of a BlockDeviceMapping.
type BlockDevice struct {
	// +optional
	VolumeSize *resource.Quantity `json:"volumeSize,omitempty"`
	// +optional
	// +kubebuilder:validation:Enum=standard;io1;io2;gp2;sc1;st1;gp3
	VolumeType *string `json:"volumeType,omitempty"`
	// +optional
	IOPS *int64 `json:"iops,omitempty"`
	// +optional
	Throughput *int64 `json:"throughput,omitempty"`
	// +optional
	Encrypted *bool `json:"encrypted,omitempty"`
	// +optional
	KMSKeyID *string `json:"kmsKeyID,omitempty"`
	// +optional
	DeleteOnTermination *bool `json:"deleteOnTermination,omitempty"`
	// +optional
	SnapshotID *string `json:"snapshotID,omitempty"`
}

// MetadataOptions configure the instance metadata service.
type MetadataOptions struct {
	// HTTPEndpoint turns IMDS on ("enabled", the default) or off.
	// +optional
	// +kubebuilder:default=enabled
	// +kubebuilder:validation:Enum=enabled;disabled
	HTTPEndpoint *string `json:"httpEndpoint,omitempty"`
	// HTTPProtocolIPv6 serves IMDS on its IPv6 address too ("disabled" by default).
	// +optional
	// +kubebuilder:default=disabled
	// +kubebuilder:validation:Enum=enabled;disabled
	HTTPProtocolIPv6 *string `json:"httpProtocolIPv6,omitempty"`
	// HTTPPutResponseHopLimit is how many network hops an IMDS token may travel; 1 keeps it from pods.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	HTTPPutResponseHopLimit *int64 `json:"httpPutResponseHopLimit,omitempty"`
	// HTTPTokens is "required" (IMDSv2, the default) or "optional".
	// +optional
	// +kubebuilder:default=required
	// +kubebuilder:validation:Enum=required;optional
	HTTPTokens *string `json:"httpTokens,omitempty"`
}

// KubeletConfiguration holds the kubelet settings Stowage passes to the node's
// bootstrap; maxPods, podsPerCore, the reservations and the eviction
// thresholds shape its allocatable resources.
// ---
// The rules mirror validateKubelet; keep them in step.
// +kubebuilder:validation:XValidation:rule=`!has(self.imageGCHighThresholdPercent) || !has(self.imageGCLowThresholdPercent) || self.imageGCHighThresholdPercent > self.imageGCLowThresholdPercent`,message="imageGCHighThresholdPercent must be above imageGCLowThresholdPercent",fieldPath=".imageGCHighThresholdPercent"
// +kubebuilder:validation:XValidation:rule=`(has(self.evictionSoft) ? self.evictionSoft : {}).all(k, has(self.evictionSoftGracePeriod) && k in self.evictionSoftGracePeriod)`,message="each evictionSoft threshold needs a grace period in evictionSoftGracePeriod",fieldPath=".evictionSoft"
// +kubebuilder:validation:XValidation:rule=`(has(self.evictionSoftGracePeriod) ? self.evictionSoftGracePeriod : {}).all(k, has(self.evictionSoft) && k in self.evictionSoft)`,message="each evictionSoftGracePeriod needs its threshold in evictionSoft",fieldPath=".evictionSoftGracePeriod"
type KubeletConfiguration struct {
	// MaxPods overrides the ENI-based pod limit.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxPods *int32 `json:"maxPods,omitempty"`
	// PodsPerCore caps pods at this many per vCPU (and never above MaxPods).
	// +optional
	// +kubebuilder:validation:Minimum=0
	PodsPerCore *int32 `json:"podsPerCore,omitempty"`
	// KubeReserved overrides the EKS formula for cpu, memory, ephemeral-storage or pid.
	// +optional
	// +kubebuilder:validation:MaxProperties=4
	// +kubebuilder:validation:XValidation:rule=`self.all(k, k in ['cpu', 'memory', 'ephemeral-storage', 'pid'])`,message="kubeReserved keys must be cpu, memory, ephemeral-storage or pid"
	// +kubebuilder:validation:XValidation:rule=`self.all(k, isQuantity(self[k]) && !quantity(self[k]).isLessThan(quantity('0')))`,message="kubeReserved values must be non-negative quantities such as 100m or 1Gi"
	KubeReserved map[string]string `json:"kubeReserved,omitempty"`
	// SystemReserved reserves resources for the OS.
	// +optional
	// +kubebuilder:validation:MaxProperties=4
	// +kubebuilder:validation:XValidation:rule=`self.all(k, k in ['cpu', 'memory', 'ephemeral-storage', 'pid'])`,message="systemReserved keys must be cpu, memory, ephemeral-storage or pid"
	// +kubebuilder:validation:XValidation:rule=`self.all(k, isQuantity(self[k]) && !quantity(self[k]).isLessThan(quantity('0')))`,message="systemReserved values must be non-negative quantities such as 100m or 1Gi"
	SystemReserved map[string]string `json:"systemReserved,omitempty"`
	// EvictionHard thresholds (memory.available, nodefs.available, ...), as quantities or percentages.
	// ---
	// The rules mirror EvictionSignals and validThreshold; keep them in step.
	// +optional
	// +kubebuilder:validation:MaxProperties=6
	// +kubebuilder:validation:XValidation:rule=`self.all(k, k in ['memory.available', 'nodefs.available', 'nodefs.inodesFree', 'imagefs.available', 'imagefs.inodesFree', 'pid.available'])`,message="evictionHard keys must be memory.available, nodefs.available, nodefs.inodesFree, imagefs.available, imagefs.inodesFree or pid.available"
	// +kubebuilder:validation:XValidation:rule=`self.all(k, self[k].endsWith('%') || (isQuantity(self[k]) && !quantity(self[k]).isLessThan(quantity('0'))))`,message="evictionHard values must be non-negative quantities such as 100Mi, or percentages such as 10%"
	// +kubebuilder:validation:XValidation:rule=`self.all(k, !self[k].endsWith('%') || (!self[k].startsWith('-') && isQuantity(self[k].substring(0, size(self[k]) - 1)) && !quantity(self[k].substring(0, size(self[k]) - 1)).isGreaterThan(quantity('100'))))`,message="evictionHard percentages must be from 0% to 100%, such as 10%"
	EvictionHard map[string]string `json:"evictionHard,omitempty"`
	// ClusterDNS servers for pods.
	// +optional
	ClusterDNS []string `json:"clusterDNS,omitempty"`
	// EvictionSoft thresholds, as evictionHard's; each needs a grace period in evictionSoftGracePeriod.
	// ---
	// The rules mirror EvictionSignals and validThreshold; keep them in step.
	// +optional
	// +kubebuilder:validation:MaxProperties=6
	// +kubebuilder:validation:XValidation:rule=`self.all(k, k in ['memory.available', 'nodefs.available', 'nodefs.inodesFree', 'imagefs.available', 'imagefs.inodesFree', 'pid.available'])`,message="evictionSoft keys must be memory.available, nodefs.available, nodefs.inodesFree, imagefs.available, imagefs.inodesFree or pid.available"
	// +kubebuilder:validation:XValidation:rule=`self.all(k, self[k].endsWith('%') || (isQuantity(self[k]) && !quantity(self[k]).isLessThan(quantity('0'))))`,message="evictionSoft values must be non-negative quantities such as 100Mi, or percentages such as 10%"
	// +kubebuilder:validation:XValidation:rule=`self.all(k, !self[k].endsWith('%') || (!self[k].startsWith('-') && isQuantity(self[k].substring(0, size(self[k]) - 1)) && !quantity(self[k].substring(0, size(self[k]) - 1)).isGreaterThan(quantity('100'))))`,message="evictionSoft percentages must be from 0% to 100%, such as 10%"
	EvictionSoft map[string]string `json:"evictionSoft,omitempty"`
	// EvictionSoftGracePeriod is how long each evictionSoft threshold must hold before pods are evicted.
	// +optional
	// +kubebuilder:validation:MaxProperties=6
	// +kubebuilder:validation:XValidation:rule=`self.all(k, k in ['memory.available', 'nodefs.available', 'nodefs.inodesFree', 'imagefs.available', 'imagefs.inodesFree', 'pid.available'])`,message="evictionSoftGracePeriod keys must be memory.available, nodefs.available, nodefs.inodesFree, imagefs.available, imagefs.inodesFree or pid.available"
	EvictionSoftGracePeriod map[string]metav1.Duration `json:"evictionSoftGracePeriod,omitempty"`
	// EvictionMaxPodGracePeriod caps, in seconds, the grace period of pods evicted on a soft threshold.
	// +optional
	// +kubebuilder:validation:Minimum=0
	EvictionMaxPodGracePeriod *int32 `json:"evictionMaxPodGracePeriod,omitempty"`
	// ImageGCHighThresholdPercent is the disk usage above which image garbage collection always runs.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	ImageGCHighThresholdPercent *int32 `json:"imageGCHighThresholdPercent,omitempty"`
	// ImageGCLowThresholdPercent is the disk usage image garbage collection frees down to; below the high one.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	ImageGCLowThresholdPercent *int32 `json:"imageGCLowThresholdPercent,omitempty"`
	// CPUCFSQuota enforces containers' CPU limits with CFS quota (the kubelet's default, true).
	// +optional
	CPUCFSQuota *bool `json:"cpuCFSQuota,omitempty"`
}

// NodeClassStatus reports what the selectors resolved to.
type NodeClassStatus struct {
	// +optional
	Subnets []Subnet `json:"subnets,omitempty"`
	// +optional
	SecurityGroups []SecurityGroup `json:"securityGroups,omitempty"`
	// AMIs are the images the selectors resolved to.
	// ---
	// The bounds let the API server price the CEL rules of their requirements.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	AMIs []AMI `json:"amis,omitempty"`
	// +optional
	InstanceProfile string `json:"instanceProfile,omitempty"`
	// CapacityReservations are the reservations the selector terms resolved to.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	CapacityReservations []CapacityReservation `json:"capacityReservations,omitempty"`
	// Conditions report whether the selectors resolved; the Ready condition is printed by kubectl.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Subnet is a resolved subnet.
type Subnet struct {
	ID     string `json:"id"`
	Zone   string `json:"zone"`
	ZoneID string `json:"zoneID,omitempty"`
}

// SecurityGroup is a resolved security group.
type SecurityGroup struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
}

// CapacityReservation is a resolved reservation.
type CapacityReservation struct {
	ID           string `json:"id"`
	InstanceType string `json:"instanceType"`
	Zone         string `json:"zone"`
	// +optional
	OwnerID string `json:"ownerID,omitempty"`
	// +optional
	InstanceMatchCriteria string `json:"instanceMatchCriteria,omitempty"`
	// ReservationType is default (an On-Demand Capacity Reservation) or
	// capacity-block (a Capacity Block for ML, used only between its start
	// and its end less the pool's capacityBlockLeadTime).
	// +optional
	ReservationType string `json:"reservationType,omitempty"`
	// State is EC2's: active, or scheduled for a block not started yet.
	// +optional
	State string `json:"state,omitempty"`
	// StartTime and EndTime bound a reservation that ends (every block).
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	EndTime *metav1.Time `json:"endTime,omitempty"`
}

// AMI is a resolved image with the requirements (architecture, GPU variant) it serves.
type AMI struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
	// Requirements are the labels a node needs for this image, e.g. kubernetes.io/arch In [arm64].
	// +optional
	// +kubebuilder:validation:MaxItems=20
	Requirements []NodeSelectorRequirementWithMinValues `json:"requirements,omitempty"`
}

// NodeClassList is a list of NodeClasses.
// +kubebuilder:object:root=true
type NodeClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodeClass `json:"items"`
}
