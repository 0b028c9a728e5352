package v1alpha1

import corev1 "k8s.io/api/core/v1"

// Well-known label keys Stowage reads and writes on nodes.
const (
	LabelNodePool     = Group + "/nodepool"
	LabelCapacityType = Group + "/capacity-type"
	LabelNodeClass    = Group + "/nodeclass"
	// LabelNodeClaim names the NodeClaim an instance was launched for; the AWS
	// layer tags instances with it to find them again.
	LabelNodeClaim = Group + "/nodeclaim"

	LabelInstanceCategory         = Group + "/instance-category"
	LabelInstanceFamily           = Group + "/instance-family"
	LabelInstanceGeneration       = Group + "/instance-generation"
	LabelInstanceSize             = Group + "/instance-size"
	LabelInstanceCPU              = Group + "/instance-cpu"
	LabelInstanceMemory           = Group + "/instance-memory"
	LabelInstanceGPUCount         = Group + "/instance-gpu-count"
	LabelInstanceGPUName          = Group + "/instance-gpu-name"
	LabelInstanceGPUManufacturer  = Group + "/instance-gpu-manufacturer"
	LabelInstanceGPUMemory        = Group + "/instance-gpu-memory"
	LabelInstanceLocalNVMe        = Group + "/instance-local-nvme"
	LabelInstanceNetworkBandwidth = Group + "/instance-network-bandwidth"
	LabelInstanceHypervisor       = Group + "/instance-hypervisor"
	// The accelerators that are not GPUs: AWS Inferentia and Trainium, which
	// the Neuron device plugin advertises as aws.amazon.com/neuron devices.
	LabelInstanceAcceleratorName         = Group + "/instance-accelerator-name"
	LabelInstanceAcceleratorManufacturer = Group + "/instance-accelerator-manufacturer"
	LabelInstanceAcceleratorCount        = Group + "/instance-accelerator-count"

	// LabelCapacityReservationID and LabelCapacityReservationType are put on
	// a node launched into a capacity reservation: its id, and its type
	// (CapacityReservationTypeDefault or CapacityReservationTypeCapacityBlock).
	// They are not requirement keys: every reserved offering is one
	// reservation, and pools choose reservations through their NodeClass.
	LabelCapacityReservationID   = Group + "/capacity-reservation-id"
	LabelCapacityReservationType = Group + "/capacity-reservation-type"
)

// Capacity reservation types, as EC2 names them: an On-Demand Capacity
// Reservation, or a Capacity Block for ML (fixed start and end).
const (
	CapacityReservationTypeDefault       = "default"
	CapacityReservationTypeCapacityBlock = "capacity-block"
)

// Capacity types a NodePool may allow through LabelCapacityType.
const (
	CapacityTypeReserved = "reserved"
	CapacityTypeSpot     = "spot"
	CapacityTypeOnDemand = "on-demand"
)

// CapacityTypes lists the capacity types in the order Stowage prefers them.
var CapacityTypes = []string{CapacityTypeReserved, CapacityTypeSpot, CapacityTypeOnDemand}

// Annotations and taints Stowage understands.
const (
	// AnnotationDoNotDisrupt on a pod or node blocks voluntary disruption.
	AnnotationDoNotDisrupt = Group + "/do-not-disrupt"
	// AnnotationKarpenterDoNotDisrupt is honoured for users migrating from Karpenter.
	AnnotationKarpenterDoNotDisrupt = "karpenter.sh/do-not-disrupt"
	// AnnotationNodePoolHash records the hash of the pool template a node was made from.
	AnnotationNodePoolHash = Group + "/nodepool-hash"
	// AnnotationNodeClassHash records the hash of the node class a node was made from.
	AnnotationNodeClassHash = Group + "/nodeclass-hash"
	// AnnotationDisruptionCommand names, on a NodeClaim launched to replace
	// disrupted nodes, the disruption command that launched it.
	AnnotationDisruptionCommand = Group + "/disruption-command"
	// AnnotationCapacityReservationEnd is, on a NodeClaim launched into a
	// capacity reservation that ends (a Capacity Block), the reservation's
	// end as EC2 reported it at launch, in RFC 3339.
	AnnotationCapacityReservationEnd = Group + "/capacity-reservation-end"
	// AnnotationReplacedInstanceTypes lists, on such a NodeClaim, the instance
	// types of the nodes it replaced and of those they had replaced in turn
	// (comma-separated): consolidation never replaces it with one of them.
	AnnotationReplacedInstanceTypes = Group + "/replaced-instance-types"
	// AnnotationDisruptionReason records, on a NodeClaim launched to replace
	// nodes, the disruption reason of the command that launched it
	// (Fallback: a return to preferred capacity, which holds it for an hour).
	AnnotationDisruptionReason = Group + "/disruption-reason"

	// TaintKeyDisrupted marks a node that is being drained and terminated.
	TaintKeyDisrupted = Group + "/disrupted"
	// TaintKeyUnregistered keeps pods off a node until Stowage has applied its labels and taints.
	TaintKeyUnregistered = Group + "/unregistered"
	// TerminationFinalizer holds NodeClaims and Nodes until their instance is gone.
	TerminationFinalizer = Group + "/termination"
)

// The interruption mark: what the interruption Lambda writes on a Node when
// AWS announces that its instance will be interrupted, and what the
// interruption controller acts on. controller/interruption.MarkNode is the
// only writer of the format; docs/guides/interruption.md describes the contract.
const (
	// AnnotationInterruptionKind names what AWS announced, one of the
	// InterruptionKind values; a Node carrying it is marked.
	AnnotationInterruptionKind = Group + "/interruption-kind"
	// AnnotationInterruptionDeadline is when the instance is expected to be
	// interrupted, in RFC 3339 (UTC); absent when the event names no time.
	AnnotationInterruptionDeadline = Group + "/interruption-deadline"
	// AnnotationInterruptionEventID is the id of the EventBridge event that
	// marked the Node; marking a Node again with the same id changes nothing.
	AnnotationInterruptionEventID = Group + "/interruption-event-id"
	// TaintKeyInterrupted keeps new pods off a marked Node (effect NoSchedule);
	// its value is the interruption kind.
	TaintKeyInterrupted = Group + "/interrupted"
)

// Values of AnnotationInterruptionKind (and of the TaintKeyInterrupted taint).
const (
	// InterruptionKindSpotInterruption: an EC2 Spot Instance Interruption
	// Warning; EC2 reclaims the instance two minutes after it.
	InterruptionKindSpotInterruption = "spot-interruption"
	// InterruptionKindRebalanceRecommendation: an EC2 Instance Rebalance
	// Recommendation; the spot instance is at elevated risk of interruption.
	InterruptionKindRebalanceRecommendation = "rebalance-recommendation"
	// InterruptionKindScheduledChange: an AWS Health scheduled change (such as
	// a retirement or maintenance) affecting the instance.
	InterruptionKindScheduledChange = "scheduled-change"
	// InterruptionKindInstanceStopping: an EC2 Instance State-change
	// Notification that the instance is stopping or stopped.
	InterruptionKindInstanceStopping = "instance-stopping"
	// InterruptionKindInstanceTerminating: an EC2 Instance State-change
	// Notification that the instance is shutting down or terminated.
	InterruptionKindInstanceTerminating = "instance-terminating"
	// InterruptionKindCapacityReservationInterruption: an EC2 Capacity
	// Reservation Instance Interruption Warning; the owner of an interruptible
	// capacity reservation is taking its capacity back, about two minutes later.
	InterruptionKindCapacityReservationInterruption = "capacity-reservation-interruption"
	// InterruptionKindCapacityBlockExpiration: the Capacity Block the
	// instance runs in is ending (EC2's Capacity Block Reservation
	// Expiration Warning, 40 minutes before the end, or the pool's
	// capacityBlockLeadTime before it); EC2 terminates the instance 30
	// minutes before the end.
	InterruptionKindCapacityBlockExpiration = "capacity-block-expiration"
)

// InterruptionKinds lists every value of AnnotationInterruptionKind.
var InterruptionKinds = []string{
	InterruptionKindSpotInterruption,
	InterruptionKindRebalanceRecommendation,
	InterruptionKindScheduledChange,
	InterruptionKindInstanceStopping,
	InterruptionKindInstanceTerminating,
	InterruptionKindCapacityReservationInterruption,
	InterruptionKindCapacityBlockExpiration,
}

// DisruptedNoScheduleTaint is put on a node before it is drained.
var DisruptedNoScheduleTaint = corev1.Taint{Key: TaintKeyDisrupted, Effect: corev1.TaintEffectNoSchedule}

// UnregisteredNoExecuteTaint is put on every node Stowage launches until it registers.
var UnregisteredNoExecuteTaint = corev1.Taint{Key: TaintKeyUnregistered, Effect: corev1.TaintEffectNoExecute}

// WellKnownLabels are the keys a NodePool may constrain without setting them as labels:
// every instance type or offering carries a value for each.
var WellKnownLabels = map[string]bool{
	corev1.LabelTopologyZone:             true,
	corev1.LabelTopologyRegion:           true,
	corev1.LabelInstanceTypeStable:       true,
	corev1.LabelArchStable:               true,
	corev1.LabelOSStable:                 true,
	corev1.LabelHostname:                 true,
	LabelCapacityType:                    true,
	LabelNodePool:                        true,
	LabelInstanceCategory:                true,
	LabelInstanceFamily:                  true,
	LabelInstanceGeneration:              true,
	LabelInstanceSize:                    true,
	LabelInstanceCPU:                     true,
	LabelInstanceMemory:                  true,
	LabelInstanceGPUCount:                true,
	LabelInstanceGPUName:                 true,
	LabelInstanceGPUManufacturer:         true,
	LabelInstanceGPUMemory:               true,
	LabelInstanceLocalNVMe:               true,
	LabelInstanceNetworkBandwidth:        true,
	LabelInstanceHypervisor:              true,
	LabelInstanceAcceleratorName:         true,
	LabelInstanceAcceleratorManufacturer: true,
	LabelInstanceAcceleratorCount:        true,
}

// RestrictedLabelDomains may not be set as NodePool labels: they belong to
// Kubernetes, Stowage or Karpenter.
var RestrictedLabelDomains = []string{"kubernetes.io", "k8s.io", Group, KarpenterGroup, KarpenterAWSGroup}

// LabelDomainExceptions are keys inside the restricted domains that a pool may still set.
var LabelDomainExceptions = []string{"kops.k8s.io", "node.kubernetes.io", "node-restriction.kubernetes.io"}
