package v1alpha1

import (
	"maps"
	"slices"
)

// Karpenter's API groups, whose well-known labels Stowage understands so that
// pools and workloads written for Karpenter keep their meaning.
const (
	KarpenterGroup    = "karpenter.sh"
	KarpenterAWSGroup = "karpenter.k8s.aws"
)

// Karpenter's labels that mark a node as Karpenter's own. Stowage never puts
// them on its nodes, so that a Karpenter still running in the cluster neither
// counts nor disrupts them.
const (
	KarpenterLabelNodePool    = KarpenterGroup + "/nodepool"
	KarpenterLabelRegistered  = KarpenterGroup + "/registered"
	KarpenterLabelInitialized = KarpenterGroup + "/initialized"
	KarpenterLabelNodeClass   = KarpenterAWSGroup + "/ec2nodeclass"
)

// KarpenterLabelAliases maps Karpenter v1's well-known selector labels to the
// Stowage labels with the same values: a NodePool requirement, a pod's node
// selector or affinity, or a topology key written with one means the other.
// karpenter.sh/nodepool is not among them: it is Karpenter's ownership
// marker, which Stowage's nodes never carry.
var KarpenterLabelAliases = map[string]string{
	KarpenterGroup + "/capacity-type":                        LabelCapacityType,
	KarpenterAWSGroup + "/instance-category":                 LabelInstanceCategory,
	KarpenterAWSGroup + "/instance-family":                   LabelInstanceFamily,
	KarpenterAWSGroup + "/instance-generation":               LabelInstanceGeneration,
	KarpenterAWSGroup + "/instance-size":                     LabelInstanceSize,
	KarpenterAWSGroup + "/instance-cpu":                      LabelInstanceCPU,
	KarpenterAWSGroup + "/instance-memory":                   LabelInstanceMemory,
	KarpenterAWSGroup + "/instance-hypervisor":               LabelInstanceHypervisor,
	KarpenterAWSGroup + "/instance-network-bandwidth":        LabelInstanceNetworkBandwidth,
	KarpenterAWSGroup + "/instance-local-nvme":               LabelInstanceLocalNVMe,
	KarpenterAWSGroup + "/instance-gpu-name":                 LabelInstanceGPUName,
	KarpenterAWSGroup + "/instance-gpu-count":                LabelInstanceGPUCount,
	KarpenterAWSGroup + "/instance-gpu-manufacturer":         LabelInstanceGPUManufacturer,
	KarpenterAWSGroup + "/instance-gpu-memory":               LabelInstanceGPUMemory,
	KarpenterAWSGroup + "/instance-accelerator-name":         LabelInstanceAcceleratorName,
	KarpenterAWSGroup + "/instance-accelerator-manufacturer": LabelInstanceAcceleratorManufacturer,
	KarpenterAWSGroup + "/instance-accelerator-count":        LabelInstanceAcceleratorCount,
}

// KarpenterLabelsWithoutEquivalent are Karpenter v1's well-known labels
// Stowage has no value for, each with the reason, which validation gives.
var KarpenterLabelsWithoutEquivalent = map[string]string{
	KarpenterLabelNodePool:                                          "it marks Karpenter's own nodes, which Stowage never launches; a pool's nodes carry " + LabelNodePool,
	KarpenterLabelNodeClass:                                         "it marks Karpenter's own nodes, which Stowage never launches; a pool's nodes carry " + LabelNodeClass,
	KarpenterAWSGroup + "/instance-cpu-manufacturer":                "Stowage's instance catalogue does not record the CPU manufacturer; constrain " + LabelInstanceFamily + " instead",
	KarpenterAWSGroup + "/instance-cpu-sustained-clock-speed-mhz":   "Stowage's instance catalogue does not record clock speeds; constrain " + LabelInstanceFamily + " instead",
	KarpenterAWSGroup + "/instance-ebs-bandwidth":                   "Stowage's instance catalogue does not record EBS bandwidth; constrain " + LabelInstanceFamily + " or " + LabelInstanceSize + " instead",
	KarpenterAWSGroup + "/instance-encryption-in-transit-supported": "Stowage's instance catalogue does not record it; constrain " + LabelInstanceFamily + " instead",
	KarpenterAWSGroup + "/instance-capability-flex":                 "Stowage's instance catalogue does not record flex instances; constrain " + LabelInstanceFamily + " instead",
	KarpenterAWSGroup + "/capacity-reservation-id":                  "Stowage selects reservations on the NodeClass (capacityReservationSelectorTerms), not per requirement",
	KarpenterAWSGroup + "/capacity-reservation-type":                "Stowage selects reservations on the NodeClass (capacityReservationSelectorTerms), not per requirement",
	"topology.k8s.aws/zone-id":                                      "Stowage places by zone name; constrain " + "topology.kubernetes.io/zone instead",
}

// CanonicalLabelKey is the Stowage key a Karpenter selector label stands
// for, or key itself.
func CanonicalLabelKey(key string) string {
	if k, ok := KarpenterLabelAliases[key]; ok {
		return k
	}
	return key
}

// karpenterKeyOf maps each Stowage key to its Karpenter alias.
var karpenterKeyOf = func() map[string]string {
	out := make(map[string]string, len(KarpenterLabelAliases))
	for k, v := range KarpenterLabelAliases {
		out[v] = k
	}
	return out
}()

// KarpenterAlias is the Karpenter key that stands for a Stowage key, if any.
func KarpenterAlias(key string) (string, bool) {
	k, ok := karpenterKeyOf[key]
	return k, ok
}

// KarpenterSelectorLabels are the Karpenter copies of the Stowage selector
// labels in labels (capacity type, instance attributes), with the same
// values: what a node Stowage launches carries besides its own labels, so that
// workloads selecting on Karpenter's keys keep scheduling after a migration.
// Karpenter's ownership markers are never among them.
func KarpenterSelectorLabels(labels map[string]string) map[string]string {
	out := map[string]string{}
	for _, key := range slices.Sorted(maps.Keys(labels)) {
		if alias, ok := karpenterKeyOf[key]; ok {
			out[alias] = labels[key]
		}
	}
	return out
}

// WithStowageLabels returns labels with the Stowage label added for every
// Karpenter selector label whose Stowage label is missing (a node Karpenter
// launched), so that it is read by the same keys as Stowage's nodes; labels
// itself when there is nothing to add.
func WithStowageLabels(labels map[string]string) map[string]string {
	var out map[string]string
	for key, value := range labels {
		stowage, ok := KarpenterLabelAliases[key]
		if !ok {
			continue
		}
		if _, has := labels[stowage]; has {
			continue
		}
		if out == nil {
			out = maps.Clone(labels)
		}
		out[stowage] = value
	}
	if out == nil {
		return labels
	}
	return out
}

// LabelValue is a node's value for key, read through the Karpenter alias
// table in either direction when the node carries only the other key.
func LabelValue(labels map[string]string, key string) (string, bool) {
	if v, ok := labels[key]; ok {
		return v, true
	}
	if stowage, ok := KarpenterLabelAliases[key]; ok {
		v, ok := labels[stowage]
		return v, ok
	}
	if alias, ok := karpenterKeyOf[key]; ok {
		v, ok := labels[alias]
		return v, ok
	}
	return "", false
}
