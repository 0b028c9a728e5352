package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodePool is a capacity policy: which instance types, zones and capacity types its
// nodes may use, how they are labelled and tainted, how much it may launch in all,
// and when its nodes may be disrupted.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=nodepools,scope=Cluster,categories=stowage,shortName=np
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
	// ---
	// The empty default lets the API server fill in the defaults of its fields.
	// +optional
	// +kubebuilder:default={}
	Disruption Disruption `json:"disruption,omitempty"`
	// Limits caps the total resources of the pool's nodes (cpu, memory, nodes, any extended resource).
	// +optional
	// +kubebuilder:validation:MaxProperties=100
	// +kubebuilder:validation:XValidation:rule=`self.all(k, type(self[k]) == string ? !self[k].startsWith('-') : self[k] >= 0)`,message="limits must not be negative; remove a limit to leave that resource unbounded"
	Limits corev1.ResourceList `json:"limits,omitempty"`
	// Weight orders pools: a higher weight is tried first.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	Weight *int32 `json:"weight,omitempty"`
	// Floor keeps a minimum of the pool's capacity whatever the load
	// (floor.go).
	Floor `json:",inline"`
}

// NodeClaimTemplate is the part of a NodeClaim a pool fixes.
type NodeClaimTemplate struct {
	// +optional
	ObjectMeta TemplateObjectMeta    `json:"metadata,omitempty"`
	Spec       NodeClaimTemplateSpec `json:"spec"`
}

// TemplateObjectMeta holds the labels and annotations put on every node of the pool.
type TemplateObjectMeta struct {
	// Labels are put on every node of the pool. Keys in the kubernetes.io, k8s.io,
	// stowage.dev, karpenter.sh and karpenter.k8s.aws domains, and the well-known
	// labels, are set by Kubernetes, Stowage or Karpenter.
	// ---
	// The rules mirror validateLabels and IsRestrictedLabel; keep them in step. Map values cannot
	// carry a maxLength marker, so only their length is checked here: a pattern would exceed the
	// API server's CEL cost budget.
	// +optional
	// +kubebuilder:validation:MaxProperties=100
	// +kubebuilder:validation:XValidation:rule=`self.all(k, !format.qualifiedName().validate(k).hasValue())`,message="labels keys must be qualified names such as example.com/team: an optional DNS subdomain prefix and '/', then up to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
	// +kubebuilder:validation:XValidation:rule=`self.all(k, size(self[k]) <= 63)`,message="labels values must be at most 63 characters: empty, or letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
	// +kubebuilder:validation:XValidation:rule=`self.all(k, !(k in ['topology.kubernetes.io/zone', 'topology.kubernetes.io/region', 'node.kubernetes.io/instance-type', 'kubernetes.io/arch', 'kubernetes.io/os', 'kubernetes.io/hostname', 'stowage.dev/capacity-type', 'stowage.dev/nodepool', 'stowage.dev/instance-category', 'stowage.dev/instance-family', 'stowage.dev/instance-generation', 'stowage.dev/instance-size', 'stowage.dev/instance-cpu', 'stowage.dev/instance-memory', 'stowage.dev/instance-gpu-count', 'stowage.dev/instance-gpu-name', 'stowage.dev/instance-gpu-manufacturer', 'stowage.dev/instance-gpu-memory', 'stowage.dev/instance-local-nvme', 'stowage.dev/instance-network-bandwidth', 'stowage.dev/instance-hypervisor', 'stowage.dev/instance-accelerator-name', 'stowage.dev/instance-accelerator-manufacturer', 'stowage.dev/instance-accelerator-count', 'karpenter.sh/capacity-type', 'karpenter.k8s.aws/instance-category', 'karpenter.k8s.aws/instance-family', 'karpenter.k8s.aws/instance-generation', 'karpenter.k8s.aws/instance-size', 'karpenter.k8s.aws/instance-cpu', 'karpenter.k8s.aws/instance-memory', 'karpenter.k8s.aws/instance-hypervisor', 'karpenter.k8s.aws/instance-network-bandwidth', 'karpenter.k8s.aws/instance-local-nvme', 'karpenter.k8s.aws/instance-gpu-name', 'karpenter.k8s.aws/instance-gpu-count', 'karpenter.k8s.aws/instance-gpu-manufacturer', 'karpenter.k8s.aws/instance-gpu-memory', 'karpenter.k8s.aws/instance-accelerator-name', 'karpenter.k8s.aws/instance-accelerator-manufacturer', 'karpenter.k8s.aws/instance-accelerator-count']) && !(k.contains('/') && ['kubernetes.io', 'k8s.io', 'stowage.dev', 'karpenter.sh', 'karpenter.k8s.aws'].exists(d, k.split('/')[0] == d || k.split('/')[0].endsWith('.' + d)) && !['kops.k8s.io', 'node.kubernetes.io', 'node-restriction.kubernetes.io'].exists(d, k.split('/')[0] == d || k.split('/')[0].endsWith('.' + d))))`,message="labels keys in the kubernetes.io, k8s.io, stowage.dev, karpenter.sh and karpenter.k8s.aws domains, and the well-known labels, are set by Kubernetes, Stowage or Karpenter; use your own prefix such as example.com/"
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// NodeClaimTemplateSpec is the scheduling and lifetime part of a pool's NodeClaims.
type NodeClaimTemplateSpec struct {
	// Requirements constrain the instance types, zones and capacity types of the pool's nodes.
	// Keys in the kubernetes.io, k8s.io, stowage.dev, karpenter.sh and karpenter.k8s.aws domains
	// must be well-known labels; Karpenter's (karpenter.sh/capacity-type,
	// karpenter.k8s.aws/instance-family, ...) mean the Stowage label of the same name.
	// ---
	// The rules mirror ValidateRequirement and IsRestrictedRequirementKey; keep them in step.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:XValidation:rule=`self.all(r, r.key != 'kubernetes.io/hostname')`,message="requirements cannot constrain kubernetes.io/hostname, which is set per node; remove that requirement"
	// +kubebuilder:validation:XValidation:rule=`self.all(r, r.key != 'stowage.dev/nodepool')`,message="requirements cannot constrain stowage.dev/nodepool, which Stowage sets to the pool's name; remove that requirement"
	// +kubebuilder:validation:XValidation:rule=`self.all(r, !(r.key in ['karpenter.sh/nodepool', 'karpenter.k8s.aws/ec2nodeclass', 'karpenter.k8s.aws/instance-cpu-manufacturer', 'karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz', 'karpenter.k8s.aws/instance-ebs-bandwidth', 'karpenter.k8s.aws/instance-encryption-in-transit-supported', 'karpenter.k8s.aws/instance-capability-flex', 'karpenter.k8s.aws/capacity-reservation-id', 'karpenter.k8s.aws/capacity-reservation-type', 'topology.k8s.aws/zone-id']))`,message="requirements cannot constrain Karpenter labels Stowage has no value for (karpenter.sh/nodepool, karpenter.k8s.aws/ec2nodeclass, instance-cpu-manufacturer, instance-cpu-sustained-clock-speed-mhz, instance-ebs-bandwidth, instance-encryption-in-transit-supported, instance-capability-flex, capacity-reservation-id and -type, topology.k8s.aws/zone-id); remove this requirement (docs/guides/karpenter-compatibility.md says why)"
	// +kubebuilder:validation:XValidation:rule=`self.all(r, !(!(r.key in ['topology.kubernetes.io/zone', 'topology.kubernetes.io/region', 'node.kubernetes.io/instance-type', 'kubernetes.io/arch', 'kubernetes.io/os', 'kubernetes.io/hostname', 'stowage.dev/capacity-type', 'stowage.dev/nodepool', 'stowage.dev/instance-category', 'stowage.dev/instance-family', 'stowage.dev/instance-generation', 'stowage.dev/instance-size', 'stowage.dev/instance-cpu', 'stowage.dev/instance-memory', 'stowage.dev/instance-gpu-count', 'stowage.dev/instance-gpu-name', 'stowage.dev/instance-gpu-manufacturer', 'stowage.dev/instance-gpu-memory', 'stowage.dev/instance-local-nvme', 'stowage.dev/instance-network-bandwidth', 'stowage.dev/instance-hypervisor', 'stowage.dev/instance-accelerator-name', 'stowage.dev/instance-accelerator-manufacturer', 'stowage.dev/instance-accelerator-count', 'karpenter.sh/capacity-type', 'karpenter.k8s.aws/instance-category', 'karpenter.k8s.aws/instance-family', 'karpenter.k8s.aws/instance-generation', 'karpenter.k8s.aws/instance-size', 'karpenter.k8s.aws/instance-cpu', 'karpenter.k8s.aws/instance-memory', 'karpenter.k8s.aws/instance-hypervisor', 'karpenter.k8s.aws/instance-network-bandwidth', 'karpenter.k8s.aws/instance-local-nvme', 'karpenter.k8s.aws/instance-gpu-name', 'karpenter.k8s.aws/instance-gpu-count', 'karpenter.k8s.aws/instance-gpu-manufacturer', 'karpenter.k8s.aws/instance-gpu-memory', 'karpenter.k8s.aws/instance-accelerator-name', 'karpenter.k8s.aws/instance-accelerator-manufacturer', 'karpenter.k8s.aws/instance-accelerator-count']) && (r.key.contains('/') && ['kubernetes.io', 'k8s.io', 'stowage.dev', 'karpenter.sh', 'karpenter.k8s.aws'].exists(d, r.key.split('/')[0] == d || r.key.split('/')[0].endsWith('.' + d)) && !['kops.k8s.io', 'node.kubernetes.io', 'node-restriction.kubernetes.io'].exists(d, r.key.split('/')[0] == d || r.key.split('/')[0].endsWith('.' + d)))))`,message="requirements keys in the kubernetes.io, k8s.io, stowage.dev, karpenter.sh and karpenter.k8s.aws domains must be well-known labels such as stowage.dev/instance-family or topology.kubernetes.io/zone, or Karpenter's that stand for them (karpenter.sh/capacity-type, karpenter.k8s.aws/instance-category, -family, -generation, -size, -cpu, -memory, -hypervisor, -network-bandwidth, -local-nvme, -gpu-name, -gpu-count, -gpu-manufacturer, -gpu-memory, -accelerator-name, -accelerator-manufacturer, -accelerator-count); use your own prefix such as example.com/ for other keys"
	// +kubebuilder:validation:XValidation:rule=`self.all(r, !has(r.values) || r.values.all(v, !format.labelValue().validate(v).hasValue()))`,message="requirements values must be label values: empty, or up to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
	Requirements []NodeSelectorRequirementWithMinValues `json:"requirements,omitempty"`
	// Taints are put on every node; pods must tolerate them to land there.
	// ---
	// The rules mirror validateTaints, except that keys and values are only measured: corev1.Taint's
	// strings have no maxLength, and a pattern on them would exceed the API server's CEL cost budget.
	// +optional
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:XValidation:rule=`self.all(t, t.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])`,message="each taint's effect must be NoSchedule, PreferNoSchedule or NoExecute"
	// +kubebuilder:validation:XValidation:rule=`self.all(t, size(t.key) > 0 && size(t.key) <= 317)`,message="each taint's key must be a qualified name such as example.com/dedicated"
	// +kubebuilder:validation:XValidation:rule=`self.all(t, !has(t.value) || size(t.value) <= 63)`,message="each taint's value must be empty or up to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
	Taints []corev1.Taint `json:"taints,omitempty"`
	// StartupTaints are expected on new nodes and removed by another agent (a CNI, a GPU operator);
	// they do not keep pods from being scheduled onto a node being launched.
	// ---
	// The rules mirror validateTaints, except that keys and values are only measured: corev1.Taint's
	// strings have no maxLength, and a pattern on them would exceed the API server's CEL cost budget.
	// +optional
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:XValidation:rule=`self.all(t, t.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])`,message="each taint's effect must be NoSchedule, PreferNoSchedule or NoExecute"
	// +kubebuilder:validation:XValidation:rule=`self.all(t, size(t.key) > 0 && size(t.key) <= 317)`,message="each taint's key must be a qualified name such as example.com/dedicated"
	// +kubebuilder:validation:XValidation:rule=`self.all(t, !has(t.value) || size(t.value) <= 63)`,message="each taint's value must be empty or up to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
	StartupTaints []corev1.Taint `json:"startupTaints,omitempty"`
	// NodeClassRef names the NodeClass the nodes are launched with.
	NodeClassRef *NodeClassReference `json:"nodeClassRef"`
	// ExpireAfter is the age at which a node is replaced, whatever the disruption budgets say (its drain is
	// bounded by TerminationGracePeriod); Never keeps nodes forever.
	// +optional
	// +kubebuilder:default="720h"
	ExpireAfter *NillableDuration `json:"expireAfter,omitempty"`
	// TerminationGracePeriod bounds how long a drain may wait on PDBs and do-not-disrupt pods.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule=`self.matches(r'^[+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$')`,message="terminationGracePeriod must be a duration such as 30s, 10m or 48h"
	TerminationGracePeriod *metav1.Duration `json:"terminationGracePeriod,omitempty"`
}

// Consolidation policies.
const (
	ConsolidationPolicyWhenEmpty                = "WhenEmpty"
	ConsolidationPolicyWhenEmptyOrUnderutilized = "WhenEmptyOrUnderutilized"
	// ConsolidationPolicyBalanced is Karpenter's (v1.14): a move is made only
	// when the share of the pool's cost it saves is at least 1/BalancedK of
	// the share of the pool's disruption cost it causes.
	ConsolidationPolicyBalanced = "Balanced"
)

// ConsolidationPolicies lists every consolidation policy.
var ConsolidationPolicies = []string{ConsolidationPolicyWhenEmpty, ConsolidationPolicyWhenEmptyOrUnderutilized, ConsolidationPolicyBalanced}

// BalancedK is Karpenter's consolidation threshold for the Balanced policy: a
// move passes when its disruption share is at most BalancedK times its savings
// share. 2 is the smallest value that lets a uniform pool replace a node by
// one half its price (Karpenter's designs/balanced-consolidation.md).
const BalancedK = 2

// Disruption reasons a budget may name. Expiration is not one: as in
// Karpenter v1, a node past its expireAfter is replaced whatever the budgets
// say (its drain is bounded by terminationGracePeriod), so a budget naming it
// would promise a limit nothing enforces.
const (
	DisruptionReasonEmpty         = "Empty"
	DisruptionReasonUnderutilized = "Underutilized"
	DisruptionReasonDrifted       = "Drifted"
	// DisruptionReasonFallback: the node runs on a fallback (a lower-weight
	// pool, or on-demand where spot is allowed) and its preferred capacity is
	// available again.
	DisruptionReasonFallback = "Fallback"
)

// DisruptionReasons lists every reason a budget may name.
var DisruptionReasons = []string{DisruptionReasonEmpty, DisruptionReasonUnderutilized, DisruptionReasonDrifted, DisruptionReasonFallback}

// Disruption configures consolidation and the budgets that bound every voluntary disruption.
type Disruption struct {
	// ConsolidationPolicy is WhenEmpty (only nodes running no pod but DaemonSet pods are removed),
	// WhenEmptyOrUnderutilized (also nodes whose pods fit on the other nodes, or on one cheaper replacement,
	// are removed or replaced) or Balanced (as WhenEmptyOrUnderutilized, but a move must also save a share
	// of the pool's cost at least half the share of the pool's disruption cost it causes, Karpenter's rule).
	// +optional
	// +kubebuilder:default=WhenEmptyOrUnderutilized
	// +kubebuilder:validation:Enum=WhenEmpty;WhenEmptyOrUnderutilized;Balanced
	ConsolidationPolicy string `json:"consolidationPolicy,omitempty"`
	// ConsolidateAfter is how long no pod may have been bound to or removed from a node before consolidation
	// (emptiness included) acts on it; Never disables consolidation.
	// +optional
	// +kubebuilder:default="0s"
	ConsolidateAfter *NillableDuration `json:"consolidateAfter,omitempty"`
	// ConsolidationMinSavings is the share of the candidate nodes' cost per hour a consolidation that
	// replaces them must save, as a percentage ("15%": the replacement costs at most 85% of what it
	// replaces); the controller's --consolidation-min-savings when unset.
	// +optional
	// +kubebuilder:validation:MaxLength=4
	// +kubebuilder:validation:XValidation:rule=`self.matches(r'^(100|[0-9]{1,2})%$')`,message="consolidationMinSavings must be a percentage from 0% to 100% such as \"15%\""
	ConsolidationMinSavings *string `json:"consolidationMinSavings,omitempty"`
	// ReturnAfter is how long the capacity this pool's nodes would rather run on (a pool of higher weight that
	// can take their pods, or spot where on-demand now runs) must have stayed available, its price steady,
	// before nodes on a fallback are replaced on it; Never keeps them where they are.
	// +optional
	// +kubebuilder:default="10m"
	ReturnAfter *NillableDuration `json:"returnAfter,omitempty"`
	// RepairAfter is how long a node may stay NotReady (its Ready condition False, or Unknown: the kubelet
	// unreachable) before it is replaced, as Karpenter's node repair does with the same default; Never
	// disables repair. Budgets do not bound repair; it stops in a pool while more than 20% of its nodes
	// (rounded up) are unhealthy, as Karpenter's does, so that a lost zone does not replace a third of the fleet.
	// +optional
	// +kubebuilder:default="30m"
	RepairAfter *NillableDuration `json:"repairAfter,omitempty"`
	// Budgets cap how many nodes may be disrupted at once; the most restrictive active budget wins.
	// +optional
	// +kubebuilder:default={{nodes: "10%"}}
	// +kubebuilder:validation:MaxItems=50
	Budgets []Budget `json:"budgets,omitempty"`
}

// Budget allows at most Nodes nodes (a count or a percentage) to be disrupted at once,
// for the given reasons, during the schedule's windows (always, without a schedule).
// +kubebuilder:validation:XValidation:rule=`has(self.schedule) == has(self.duration)`,message="schedule and duration go together; set both or neither"
type Budget struct {
	// Nodes is a count ("3") or a percentage of the pool's nodes ("10%").
	// +kubebuilder:default="10%"
	// +kubebuilder:validation:MaxLength=19
	// +kubebuilder:validation:XValidation:rule=`self.matches(r'^((100|[0-9]{1,2})%|[0-9]+)$')`,message="nodes must be a node count such as \"3\" or a percentage from 0% to 100% such as \"10%\""
	Nodes string `json:"nodes"`
	// Schedule is a cron expression (UTC) opening the budget's window; it needs Duration.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule=`self in ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'] || self.matches(r'^\s*\S+(\s+\S+){4}\s*$')`,message="schedule must be a five-field cron expression (minute hour day-of-month month day-of-week) such as \"0 9 * * 1-5\", or a macro such as @daily"
	Schedule *string `json:"schedule,omitempty"`
	// Duration is how long the window stays open after each Schedule firing.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule=`self.matches(r'^[+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$')`,message="duration must be a duration such as 30m or 8h"
	Duration *metav1.Duration `json:"duration,omitempty"`
	// Reasons the budget applies to (Empty, Underutilized, Drifted, Fallback); all of them when empty.
	// Expiration is not budgeted: a node past its expireAfter is replaced whatever the budgets say.
	// +optional
	// +kubebuilder:validation:items:Enum=Empty;Underutilized;Drifted;Fallback
	Reasons []string `json:"reasons,omitempty"`
}

// NodePoolStatus reports what the pool has launched.
type NodePoolStatus struct {
	// Resources sums the capacity of the pool's nodes, plus a "nodes" count.
	// +optional
	Resources corev1.ResourceList `json:"resources,omitempty"`
	// Conditions report the pool's readiness; the Ready condition is printed by kubectl.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// NodePoolList is a list of NodePools.
// +kubebuilder:object:root=true
type NodePoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodePool `json:"items"`
}
