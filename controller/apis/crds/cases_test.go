package crds_test

import (
	"fmt"
	"strings"
)

// Minimal valid objects; each case merges its patch into one of them.
const (
	basePool = `
apiVersion: stowage.dev/v1alpha1
kind: NodePool
spec:
  template:
    spec:
      nodeClassRef: {name: default}
      requirements:
        - {key: stowage.dev/capacity-type, operator: In, values: [spot, on-demand]}
`
	baseClass = `
apiVersion: stowage.dev/v1alpha1
kind: NodeClass
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: StowageNodeRole
  subnetSelectorTerms: [{tags: {stowage.dev/discovery: test}}]
  securityGroupSelectorTerms: [{tags: {stowage.dev/discovery: test}}]
`
	baseClaim = `
apiVersion: stowage.dev/v1alpha1
kind: NodeClaim
spec:
  nodeClassRef: {group: stowage.dev, kind: NodeClass, name: default}
  requirements:
    - {key: node.kubernetes.io/instance-type, operator: In, values: [g5.12xlarge, g5.24xlarge]}
`
)

// admissionCase is an object (base with patch merged in, as a JSON merge patch:
// maps merge, lists are replaced, null removes) and what the API server must say.
type admissionCase struct {
	name  string
	base  string
	patch string
	// field is the path the rejection must name, and msg a part of its message;
	// both empty for an object that must be accepted.
	field, msg string
	// admissionOnly marks bounds the schema enforces but Validate does not, so the
	// Go side of the check is skipped.
	admissionOnly bool
}

func long(n int) string { return strings.Repeat("a", n) }

// reqs patches a pool's requirements with one requirement written in flow YAML.
func reqs(req string) string { return `{spec: {template: {spec: {requirements: [` + req + `]}}}}` }

// claimReqs patches a claim's requirements.
func claimReqs(req string) string { return `{spec: {requirements: [` + req + `]}}` }

func labels(l string) string { return `{spec: {template: {metadata: {labels: ` + l + `}}}}` }

func budget(b string) string { return `{spec: {disruption: {budgets: [` + b + `]}}}` }

func kubelet(k string) string { return `{spec: {kubelet: ` + k + `}}` }

const (
	poolReqs     = "spec.template.spec.requirements"
	poolReq0     = "spec.template.spec.requirements[0]"
	poolLabels   = "spec.template.metadata.labels"
	poolBudget0  = "spec.disruption.budgets[0]"
	classKubelet = "spec.kubelet"
)

var validCases = []admissionCase{
	{name: "minimal pool", base: basePool},
	{name: "pool with every operator", base: basePool, patch: `{spec: {template: {spec: {requirements: [
		{key: stowage.dev/instance-family, operator: In, values: [c6i, m6i], minValues: 2},
		{key: stowage.dev/instance-size, operator: NotIn, values: [metal]},
		{key: stowage.dev/instance-gpu-count, operator: Exists},
		{key: example.com/legacy, operator: DoesNotExist},
		{key: stowage.dev/instance-cpu, operator: Gt, values: ["3"]},
		{key: stowage.dev/instance-memory, operator: Lt, values: ["131072"]},
		{key: stowage.dev/instance-generation, operator: Gte, values: ["6"]},
		{key: stowage.dev/instance-network-bandwidth, operator: Lte, values: ["50000"]}]}}}}`},
	{name: "NotIn with no values", base: basePool, patch: reqs(`{key: stowage.dev/instance-family, operator: NotIn}`)},
	{name: "minValues on Exists", base: basePool, patch: reqs(`{key: stowage.dev/instance-family, operator: Exists, minValues: 50}`)},
	{name: "pool with Karpenter's well-known keys", base: basePool, patch: `{spec: {template: {spec: {requirements: [
		{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]},
		{key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r]},
		{key: karpenter.k8s.aws/instance-family, operator: Exists, minValues: 2},
		{key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["2"]},
		{key: karpenter.k8s.aws/instance-cpu, operator: Lt, values: ["65"]},
		{key: karpenter.k8s.aws/instance-accelerator-name, operator: DoesNotExist},
		{key: stowage.dev/instance-accelerator-count, operator: DoesNotExist}]}}}}`},
	{name: "every well-known zone and type key", base: basePool, patch: `{spec: {template: {spec: {requirements: [
		{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a]},
		{key: node.kubernetes.io/instance-type, operator: In, values: [m6i.large]},
		{key: kubernetes.io/arch, operator: In, values: [arm64]},
		{key: stowage.dev/capacity-type, operator: In, values: [reserved, spot, on-demand]}]}}}}`},
	{name: "requirement keys in allowed subdomains", base: basePool, patch: `{spec: {template: {spec: {requirements: [
		{key: node.kubernetes.io/lifecycle, operator: Exists},
		{key: team.node-restriction.kubernetes.io/owner, operator: Exists},
		{key: kops.k8s.io/instancegroup, operator: Exists},
		{key: fookubernetes.io/bar, operator: Exists},
		{key: plain, operator: Exists}]}}}}`},
	{name: "labels in own and allowed domains", base: basePool, patch: labels(`{team: web, example.com/team: "", node.kubernetes.io/lifecycle: spot, node-restriction.kubernetes.io/pool: web, kops.k8s.io/instancegroup: nodes}`)},
	{name: "taints of every effect", base: basePool, patch: `{spec: {template: {spec: {
		taints: [{key: dedicated, value: gpu, effect: NoSchedule}, {key: example.com/soft, effect: PreferNoSchedule}],
		startupTaints: [{key: nvidia.com/gpu-driver, effect: NoExecute}]}}}}`},
	{name: "weight bounds", base: basePool, patch: `{spec: {weight: 1}}`},
	{name: "minPodPriority at the lowest int32", base: basePool, patch: `{spec: {minPodPriority: -2147483648}}`},
	{name: "minPodPriority at system-node-critical", base: basePool, patch: `{spec: {minPodPriority: 2000001000}}`},
	{name: "a floor within the nodes limit", base: basePool, patch: `{spec: {minNodes: 2, capacityBlockLeadTime: 45m, limits: {nodes: "2"}}}`},
	{name: "a floor with an integer nodes limit", base: basePool, patch: `{spec: {minNodes: 3, limits: {nodes: 10, cpu: "100"}}}`},
	{name: "durations in Go syntax and Never", base: basePool, patch: `{spec: {
		disruption: {consolidationPolicy: WhenEmpty, consolidateAfter: 1m30s},
		template: {spec: {expireAfter: Never, terminationGracePeriod: 48h0m0.5s}}}}`},
	{name: "consolidation disabled", base: basePool, patch: `{spec: {disruption: {consolidateAfter: Never}}}`},
	{name: "balanced consolidation, its minimum saving, no return", base: basePool, patch: `{spec: {disruption: {
		consolidationPolicy: Balanced, consolidationMinSavings: "25%", returnAfter: Never}}}`},
	{name: "return after half an hour, no minimum saving", base: basePool, patch: `{spec: {disruption: {returnAfter: 30m, consolidationMinSavings: "0%"}}}`},
	{name: "sub-second durations", base: basePool, patch: `{spec: {disruption: {consolidateAfter: 500ms}, template: {spec: {expireAfter: 2160h}}}}`},
	{name: "budgets with schedules and reasons", base: basePool, patch: `{spec: {disruption: {budgets: [
		{nodes: "0", schedule: "0 9 * * 1-5", duration: 8h, reasons: [Underutilized, Empty]},
		{nodes: "100%", schedule: "@daily", duration: 10m, reasons: [Drifted, Empty]},
		{nodes: "1", reasons: [Fallback]},
		{nodes: "5"}]}}}`},
	{name: "limits", base: basePool, patch: `{spec: {limits: {cpu: 100, memory: 400Gi, nvidia.com/gpu: "8", nodes: "0"}}}`},
	{name: "minimal class", base: baseClass},
	{name: "class with an instance profile", base: baseClass, patch: `{spec: {role: null, instanceProfile: StowageNodeProfile}}`},
	{name: "images by tags, name, owner and id", base: baseClass, patch: `{spec: {amiSelectorTerms: [
		{tags: {team: ml}}, {name: "my-ami-*", owner: "123456789012"}, {id: ami-0123abcd}]}}`},
	{name: "pinned image alias", base: baseClass, patch: `{spec: {amiSelectorTerms: [{alias: bottlerocket@v1.20.0}]}}`},
	{name: "subnets and security groups by id and name", base: baseClass, patch: `{spec: {
		subnetSelectorTerms: [{id: subnet-0a1}, {tags: {Name: "*"}}],
		securityGroupSelectorTerms: [{id: sg-0a1}, {name: nodes, tags: {team: web}}, {name: extra}]}}`},
	{name: "images by id with their bootstrap family", base: baseClass, patch: `{spec: {amiFamily: Bottlerocket, amiSelectorTerms: [{id: ami-123}, {name: my-br-*}]}}`},
	{name: "alias with amiFamily Custom", base: baseClass, patch: `{spec: {amiFamily: Custom}}`},
	{name: "alias with its own amiFamily", base: baseClass, patch: `{spec: {amiFamily: AL2023}}`},
	{name: "instance store in RAID0", base: baseClass, patch: `{spec: {instanceStorePolicy: RAID0}}`},
	{name: "capacity reservations by id, tags, owner and match criteria", base: baseClass, patch: `{spec: {capacityReservationSelectorTerms: [
		{id: cr-0123abcd}, {tags: {team: ml}, ownerID: "123456789012"}, {instanceMatchCriteria: targeted}]}}`},
	{name: "every kubelet setting Karpenter exposes", base: baseClass, patch: kubelet(`{clusterDNS: [10.100.0.10], maxPods: 58, podsPerCore: 4,
		evictionSoft: {memory.available: 10%, nodefs.available: 15%}, evictionSoftGracePeriod: {memory.available: 1m30s, nodefs.available: 2m},
		evictionMaxPodGracePeriod: 60, imageGCHighThresholdPercent: 85, imageGCLowThresholdPercent: 80, cpuCFSQuota: false}`)},
	{name: "metadata options", base: baseClass, patch: `{spec: {metadataOptions: {httpTokens: optional, httpPutResponseHopLimit: 2}}}`},
	{name: "kubelet reservations and thresholds", base: baseClass, patch: kubelet(`{maxPods: 110, podsPerCore: 0,
		kubeReserved: {cpu: 100m, memory: 1Gi, ephemeral-storage: 1Gi, pid: "1000"},
		systemReserved: {cpu: "0"},
		evictionHard: {memory.available: 5%, nodefs.available: 10.5%, nodefs.inodesFree: 100%, imagefs.available: 0%, imagefs.inodesFree: .5%, pid.available: 100Mi},
		clusterDNS: [10.100.0.10]}`)},
	{name: "block devices", base: baseClass, patch: `{spec: {blockDeviceMappings: [
		{deviceName: /dev/xvda, rootVolume: true, ebs: {volumeSize: 200Gi, volumeType: gp3, iops: 3000, throughput: 125, encrypted: true}}]}}`},
	{name: "minimal claim", base: baseClaim},
	{name: "claim with the pool's requirements", base: baseClaim, patch: `{spec: {
		requirements: [
			{key: stowage.dev/nodepool, operator: In, values: [default]},
			{key: kubernetes.io/hostname, operator: Exists},
			{key: node.kubernetes.io/instance-type, operator: In, values: [g5.12xlarge, g6.12xlarge], minValues: 2}],
		resources: {requests: {cpu: 3500m, memory: 14Gi, nvidia.com/gpu: 4}},
		taints: [{key: dedicated, value: gpu, effect: NoSchedule}],
		expireAfter: Never, terminationGracePeriod: 48h}}`},
}

var invalidCases = []admissionCase{
	// Requirements: operators and values.
	{name: "In without values", base: basePool, patch: reqs(`{key: stowage.dev/instance-family, operator: In}`),
		field: poolReq0 + ".values", msg: "In needs at least one value"},
	{name: "In with an empty list", base: basePool, patch: reqs(`{key: stowage.dev/instance-family, operator: In, values: []}`),
		field: poolReq0 + ".values", msg: "In needs at least one value"},
	{name: "Exists with values", base: basePool, patch: reqs(`{key: stowage.dev/instance-family, operator: Exists, values: [c6i]}`),
		field: poolReq0 + ".values", msg: "take no values; remove them"},
	{name: "DoesNotExist with values", base: basePool, patch: reqs(`{key: example.com/x, operator: DoesNotExist, values: ["y"]}`),
		field: poolReq0 + ".values", msg: "take no values; remove them"},
	{name: "Gt with two values", base: basePool, patch: reqs(`{key: stowage.dev/instance-cpu, operator: Gt, values: ["1", "2"]}`),
		field: poolReq0 + ".values", msg: "exactly one non-negative integer"},
	{name: "Lt with a word", base: basePool, patch: reqs(`{key: stowage.dev/instance-cpu, operator: Lt, values: [four]}`),
		field: poolReq0 + ".values", msg: "exactly one non-negative integer"},
	{name: "Gte with a fraction", base: basePool, patch: reqs(`{key: stowage.dev/instance-cpu, operator: Gte, values: ["1.5"]}`),
		field: poolReq0 + ".values", msg: "exactly one non-negative integer"},
	{name: "Lte without values", base: basePool, patch: reqs(`{key: stowage.dev/instance-cpu, operator: Lte}`),
		field: poolReq0 + ".values", msg: "exactly one non-negative integer"},
	{name: "unknown operator", base: basePool, patch: reqs(`{key: stowage.dev/instance-cpu, operator: Between, values: ["1"]}`),
		field: poolReq0 + ".operator", msg: `supported values: "In", "NotIn"`},
	{name: "minValues above the values listed", base: basePool, patch: reqs(`{key: stowage.dev/instance-family, operator: In, values: [c6i, m6i], minValues: 3}`),
		field: poolReq0 + ".minValues", msg: "list more values or lower minValues"},
	{name: "minValues zero", base: basePool, patch: reqs(`{key: stowage.dev/instance-family, operator: Exists, minValues: 0}`),
		field: poolReq0 + ".minValues", msg: "greater than or equal to 1"},
	{name: "minValues above 50", base: basePool, patch: reqs(`{key: stowage.dev/instance-family, operator: Exists, minValues: 51}`),
		field: poolReq0 + ".minValues", msg: "less than or equal to 50"},
	{name: "unknown capacity type", base: basePool, patch: reqs(`{key: stowage.dev/capacity-type, operator: In, values: [preemptible]}`),
		field: poolReq0 + ".values", msg: "reserved, spot or on-demand"},
	{name: "value not a label value", base: basePool, patch: reqs(`{key: example.com/team, operator: In, values: ["web team"]}`),
		field: poolReqs, msg: "values must be label values"},
	{name: "value longer than a label value", base: basePool, patch: reqs(`{key: example.com/team, operator: In, values: [` + long(64) + `]}`),
		field: poolReq0 + ".values[0]", msg: "63"},
	// Requirements: keys.
	{name: "key not a qualified name", base: basePool, patch: reqs(`{key: "not a key", operator: Exists}`),
		field: poolReq0 + ".key", msg: "key must be a qualified name"},
	{name: "key with two slashes", base: basePool, patch: reqs(`{key: example.com/a/b, operator: Exists}`),
		field: poolReq0 + ".key", msg: "key must be a qualified name"},
	{name: "key with an upper-case prefix", base: basePool, patch: reqs(`{key: Example.com/team, operator: Exists}`),
		field: poolReq0 + ".key", msg: "key must be a qualified name"},
	{name: "hostname required by a pool", base: basePool, patch: reqs(`{key: kubernetes.io/hostname, operator: Exists}`),
		field: poolReqs, msg: "cannot constrain kubernetes.io/hostname"},
	{name: "nodepool required by a pool", base: basePool, patch: reqs(`{key: stowage.dev/nodepool, operator: In, values: [other]}`),
		field: poolReqs, msg: "cannot constrain stowage.dev/nodepool"},
	{name: "requirement in the kubernetes.io domain", base: basePool, patch: reqs(`{key: kubernetes.io/role, operator: Exists}`),
		field: poolReqs, msg: "must be well-known labels"},
	{name: "requirement in a k8s.io subdomain", base: basePool, patch: reqs(`{key: sub.k8s.io/thing, operator: Exists}`),
		field: poolReqs, msg: "must be well-known labels"},
	{name: "requirement on an unknown stowage.dev label", base: basePool, patch: reqs(`{key: stowage.dev/instance-colour, operator: Exists}`),
		field: poolReqs, msg: "use your own prefix"},
	{name: "requirement on Karpenter's nodepool label", base: basePool, patch: reqs(`{key: karpenter.sh/nodepool, operator: In, values: [default]}`),
		field: poolReqs, msg: "cannot constrain Karpenter labels Stowage has no value for"},
	{name: "requirement on a Karpenter label without an equivalent", base: basePool, patch: reqs(`{key: karpenter.k8s.aws/instance-ebs-bandwidth, operator: Gt, values: ["1000"]}`),
		field: poolReqs, msg: "cannot constrain Karpenter labels Stowage has no value for"},
	{name: "requirement on Stowage's name under Karpenter's domain", base: basePool, patch: reqs(`{key: karpenter.sh/instance-family, operator: In, values: [c6i]}`),
		field: poolReqs, msg: "or Karpenter's that stand for them (karpenter.sh/capacity-type, karpenter.k8s.aws/instance-category, -family"},
	{name: "requirement on a mistyped Karpenter label", base: basePool, patch: reqs(`{key: karpenter.k8s.aws/instance-famly, operator: In, values: [c6i]}`),
		field: poolReqs, msg: "must be well-known labels"},
	{name: "Karpenter capacity type of an unknown value", base: basePool, patch: reqs(`{key: karpenter.sh/capacity-type, operator: In, values: [preemptible]}`),
		field: poolReq0 + ".values", msg: "values must be reserved, spot or on-demand"},
	{name: "more than 100 requirements", base: basePool, patch: reqs(strings.Repeat(`{key: example.com/x, operator: Exists}, `, 101)),
		field: poolReqs, msg: "must have at most 100 items", admissionOnly: true},
	// Labels.
	{name: "label in the kubernetes.io domain", base: basePool, patch: labels(`{kubernetes.io/role: web}`),
		field: poolLabels, msg: "use your own prefix such as example.com/"},
	{name: "well-known label set by a pool", base: basePool, patch: labels(`{topology.kubernetes.io/zone: us-east-1a}`),
		field: poolLabels, msg: "use your own prefix such as example.com/"},
	{name: "label in the stowage.dev domain", base: basePool, patch: labels(`{stowage.dev/team: web}`),
		field: poolLabels, msg: "use your own prefix such as example.com/"},
	{name: "Karpenter's nodepool label set by a pool", base: basePool, patch: labels(`{karpenter.sh/nodepool: default}`),
		field: poolLabels, msg: "set by Kubernetes, Stowage or Karpenter"},
	{name: "Karpenter's selector label set by a pool", base: basePool, patch: labels(`{karpenter.k8s.aws/instance-family: c6i}`),
		field: poolLabels, msg: "set by Kubernetes, Stowage or Karpenter"},
	{name: "label in a k8s.io subdomain", base: basePool, patch: labels(`{x.k8s.io/team: web}`),
		field: poolLabels, msg: "use your own prefix such as example.com/"},
	{name: "label key not a qualified name", base: basePool, patch: labels(`{"my team": web}`),
		field: poolLabels, msg: "labels keys must be qualified names"},
	{name: "label value too long", base: basePool, patch: labels(`{team: ` + long(64) + `}`),
		field: poolLabels, msg: "at most 63 characters"},
	// Taints.
	{name: "unknown taint effect", base: basePool, patch: `{spec: {template: {spec: {taints: [{key: dedicated, effect: NoRun}]}}}}`,
		field: "spec.template.spec.taints", msg: "NoSchedule, PreferNoSchedule or NoExecute"},
	{name: "unknown startup taint effect", base: basePool, patch: `{spec: {template: {spec: {startupTaints: [{key: cni, effect: Later}]}}}}`,
		field: "spec.template.spec.startupTaints", msg: "NoSchedule, PreferNoSchedule or NoExecute"},
	{name: "empty taint key", base: basePool, patch: `{spec: {template: {spec: {taints: [{key: "", effect: NoSchedule}]}}}}`,
		field: "spec.template.spec.taints", msg: "key must be a qualified name"},
	{name: "taint value too long", base: basePool, patch: `{spec: {template: {spec: {taints: [{key: a, value: ` + long(64) + `, effect: NoSchedule}]}}}}`,
		field: "spec.template.spec.taints", msg: "value must be empty or up to 63"},
	// Node class reference.
	{name: "Karpenter's node class group", base: basePool, patch: `{spec: {template: {spec: {nodeClassRef: {group: karpenter.k8s.aws}}}}}`,
		field: "spec.template.spec.nodeClassRef.group", msg: "group must be stowage.dev"},
	{name: "Karpenter's node class kind", base: basePool, patch: `{spec: {template: {spec: {nodeClassRef: {kind: EC2NodeClass}}}}}`,
		field: "spec.template.spec.nodeClassRef.kind", msg: "kind must be NodeClass"},
	{name: "empty node class name", base: basePool, patch: `{spec: {template: {spec: {nodeClassRef: {name: ""}}}}}`,
		field: "spec.template.spec.nodeClassRef.name", msg: "at least 1 chars long"},
	{name: "no node class", base: basePool, patch: `{spec: {template: {spec: {nodeClassRef: null}}}}`,
		field: "spec.template.spec.nodeClassRef", msg: "Required value"},
	// Weight, limits, durations.
	{name: "weight zero", base: basePool, patch: `{spec: {weight: 0}}`, field: "spec.weight", msg: "greater than or equal to 1"},
	{name: "weight above 100", base: basePool, patch: `{spec: {weight: 101}}`, field: "spec.weight", msg: "less than or equal to 100"},
	{name: "minPodPriority above system-node-critical", base: basePool, patch: `{spec: {minPodPriority: 2000001001}}`, field: "spec.minPodPriority", msg: "less than or equal to 2000001000"},
	{name: "a negative floor", base: basePool, patch: `{spec: {minNodes: -1}}`, field: "spec.minNodes", msg: "greater than or equal to 0"},
	{name: "a block lead time under EC2's 30 minutes", base: basePool, patch: `{spec: {capacityBlockLeadTime: 20m}}`,
		field: "spec.capacityBlockLeadTime", msg: "at least 30m"},
	{name: "a block lead time in words", base: basePool, patch: `{spec: {capacityBlockLeadTime: an hour}}`,
		field: "spec.capacityBlockLeadTime", msg: "at least 30m"},
	{name: "negative limit", base: basePool, patch: `{spec: {limits: {cpu: "-1"}}}`, field: "spec.limits", msg: "limits must not be negative"},
	{name: "negative integer limit", base: basePool, patch: `{spec: {limits: {cpu: -4}}}`, field: "spec.limits", msg: "limits must not be negative"},
	{name: "limit not a quantity", base: basePool, patch: `{spec: {limits: {memory: lots}}}`, field: "spec.limits.memory", msg: "should match"},
	{name: "expireAfter in words", base: basePool, patch: `{spec: {template: {spec: {expireAfter: forever}}}}`,
		field: "spec.template.spec.expireAfter", msg: "such as 30s, 10m or 720h, or Never"},
	{name: "terminationGracePeriod Never", base: basePool, patch: `{spec: {template: {spec: {terminationGracePeriod: Never}}}}`,
		field: "spec.template.spec.terminationGracePeriod", msg: "such as 30s, 10m or 48h"},
	{name: "negative consolidateAfter", base: basePool, patch: `{spec: {disruption: {consolidateAfter: -5m}}}`,
		field: "spec.disruption.consolidateAfter", msg: "such as 30s, 10m or 720h, or Never"},
	// Disruption.
	{name: "Karpenter v1beta1 consolidation policy", base: basePool, patch: `{spec: {disruption: {consolidationPolicy: WhenUnderutilized}}}`,
		field: "spec.disruption.consolidationPolicy", msg: `supported values: "WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced"`},
	{name: "minimum saving as a fraction", base: basePool, patch: `{spec: {disruption: {consolidationMinSavings: "0.15"}}}`,
		field: "spec.disruption.consolidationMinSavings", msg: `percentage from 0% to 100% such as "15%"`},
	{name: "minimum saving above 100%", base: basePool, patch: `{spec: {disruption: {consolidationMinSavings: "150%"}}}`,
		field: "spec.disruption.consolidationMinSavings", msg: `percentage from 0% to 100%`},
	{name: "returnAfter in words", base: basePool, patch: `{spec: {disruption: {returnAfter: soon}}}`,
		field: "spec.disruption.returnAfter", msg: "such as 30s, 10m or 720h, or Never"},
	{name: "budget above 100%", base: basePool, patch: budget(`{nodes: "110%"}`),
		field: poolBudget0 + ".nodes", msg: "percentage from 0% to 100%"},
	{name: "budget in words", base: basePool, patch: budget(`{nodes: ten}`),
		field: poolBudget0 + ".nodes", msg: `a node count such as "3"`},
	{name: "budget schedule without duration", base: basePool, patch: budget(`{nodes: "1", schedule: "@daily"}`),
		field: poolBudget0, msg: "set both or neither"},
	{name: "budget duration without schedule", base: basePool, patch: budget(`{nodes: "1", duration: 1h}`),
		field: poolBudget0, msg: "set both or neither"},
	{name: "budget schedule with four fields", base: basePool, patch: budget(`{nodes: "1", schedule: "0 9 * *", duration: 1h}`),
		field: poolBudget0 + ".schedule", msg: "five-field cron expression"},
	{name: "budget duration in words", base: basePool, patch: budget(`{nodes: "1", schedule: "@hourly", duration: "1 hour"}`),
		field: poolBudget0 + ".duration", msg: "such as 30m or 8h"},
	{name: "unknown budget reason", base: basePool, patch: budget(`{nodes: "1", reasons: [Consolidation]}`),
		field: poolBudget0 + ".reasons[0]", msg: `supported values: "Empty", "Underutilized", "Drifted"`},
	// Node class: images.
	{name: "no image terms", base: baseClass, patch: `{spec: {amiSelectorTerms: null}}`,
		field: "spec.amiSelectorTerms", msg: "Required value"},
	{name: "empty image terms", base: baseClass, patch: `{spec: {amiSelectorTerms: []}}`,
		field: "spec.amiSelectorTerms", msg: "at least 1 items"},
	{name: "alias beside another term", base: baseClass, patch: `{spec: {amiSelectorTerms: [{alias: al2023@latest}, {id: ami-123}]}}`,
		field: "spec.amiSelectorTerms", msg: "must be the only term"},
	{name: "alias beside tags", base: baseClass, patch: `{spec: {amiSelectorTerms: [{alias: al2023@latest, tags: {team: ml}}]}}`,
		field: "spec.amiSelectorTerms[0].alias", msg: "only field of its term"},
	{name: "amiFamily other than the alias's", base: baseClass, patch: `{spec: {amiFamily: Bottlerocket}}`,
		field: "spec.amiFamily", msg: "amiFamily must be the alias's family or Custom"},
	{name: "amiFamily AL2", base: baseClass, patch: `{spec: {amiFamily: AL2, amiSelectorTerms: [{id: ami-123}]}}`,
		field: "spec.amiFamily", msg: `supported values: "AL2023", "Bottlerocket", "Custom"`},
	{name: "instance store policy other than RAID0", base: baseClass, patch: `{spec: {instanceStorePolicy: RAID1}}`,
		field: "spec.instanceStorePolicy", msg: `supported values: "RAID0"`},
	{name: "empty reservation term", base: baseClass, patch: `{spec: {capacityReservationSelectorTerms: [{ownerID: "123456789012"}]}}`,
		field: "spec.capacityReservationSelectorTerms[0]", msg: "must set tags, id or instanceMatchCriteria"},
	{name: "reservation id beside tags", base: baseClass, patch: `{spec: {capacityReservationSelectorTerms: [{id: cr-0abc, tags: {a: b}}]}}`,
		field: "spec.capacityReservationSelectorTerms[0].id", msg: "selects one reservation on its own"},
	{name: "reservation id of the wrong shape", base: baseClass, patch: `{spec: {capacityReservationSelectorTerms: [{id: res-1}]}}`,
		field: "spec.capacityReservationSelectorTerms[0].id", msg: "should match"},
	{name: "reservation owner of the wrong shape", base: baseClass, patch: `{spec: {capacityReservationSelectorTerms: [{instanceMatchCriteria: open, ownerID: acme}]}}`,
		field: "spec.capacityReservationSelectorTerms[0].ownerID", msg: "should match"},
	{name: "evictionSoft without a grace period", base: baseClass, patch: kubelet(`{evictionSoft: {memory.available: 10%}}`),
		field: classKubelet + ".evictionSoft", msg: "needs a grace period"},
	{name: "grace period without evictionSoft", base: baseClass, patch: kubelet(`{evictionSoftGracePeriod: {memory.available: 1m}}`),
		field: classKubelet + ".evictionSoftGracePeriod", msg: "needs its threshold in evictionSoft"},
	{name: "image GC high below low", base: baseClass, patch: kubelet(`{imageGCHighThresholdPercent: 50, imageGCLowThresholdPercent: 60}`),
		field: classKubelet + ".imageGCHighThresholdPercent", msg: "must be above imageGCLowThresholdPercent"},
	{name: "evictionSoft of an unknown signal", base: baseClass, patch: kubelet(`{evictionSoft: {memory.free: 1Gi}, evictionSoftGracePeriod: {memory.free: 1m}}`),
		field: classKubelet + ".evictionSoft", msg: "memory.available, nodefs.available"},
	{name: "Windows alias", base: baseClass, patch: `{spec: {amiSelectorTerms: [{alias: windows2022@latest}]}}`,
		field: "spec.amiSelectorTerms[0].alias", msg: "family al2023 or bottlerocket"},
	{name: "alias without a version", base: baseClass, patch: `{spec: {amiSelectorTerms: [{alias: al2023}]}}`,
		field: "spec.amiSelectorTerms[0].alias", msg: "e.g. al2023@latest"},
	{name: "image term with only an owner", base: baseClass, patch: `{spec: {amiSelectorTerms: [{owner: amazon}]}}`,
		field: "spec.amiSelectorTerms[0]", msg: "must set alias, tags, id or name"},
	{name: "image tag with an empty value", base: baseClass, patch: `{spec: {amiSelectorTerms: [{tags: {team: ""}}]}}`,
		field: "spec.amiSelectorTerms[0].tags", msg: `use "*" to match any value`},
	{name: "image id of the wrong shape", base: baseClass, patch: `{spec: {amiSelectorTerms: [{id: img-123}]}}`,
		field: "spec.amiSelectorTerms[0].id", msg: "should match", admissionOnly: true},
	// Node class: network and IAM.
	{name: "no subnet terms", base: baseClass, patch: `{spec: {subnetSelectorTerms: []}}`,
		field: "spec.subnetSelectorTerms", msg: "at least 1 items"},
	{name: "empty subnet term", base: baseClass, patch: `{spec: {subnetSelectorTerms: [{}]}}`,
		field: "spec.subnetSelectorTerms[0]", msg: "must set tags or id"},
	{name: "subnet id beside tags", base: baseClass, patch: `{spec: {subnetSelectorTerms: [{id: subnet-0a1, tags: {a: b}}]}}`,
		field: "spec.subnetSelectorTerms[0].id", msg: "remove tags from this term"},
	{name: "subnet tag with an empty key", base: baseClass, patch: `{spec: {subnetSelectorTerms: [{tags: {"": b}}]}}`,
		field: "spec.subnetSelectorTerms[0].tags", msg: "must not be empty"},
	{name: "no security group terms", base: baseClass, patch: `{spec: {securityGroupSelectorTerms: null}}`,
		field: "spec.securityGroupSelectorTerms", msg: "Required value"},
	{name: "empty security group term", base: baseClass, patch: `{spec: {securityGroupSelectorTerms: [{}]}}`,
		field: "spec.securityGroupSelectorTerms[0]", msg: "must set tags, id or name"},
	{name: "security group id beside a name", base: baseClass, patch: `{spec: {securityGroupSelectorTerms: [{id: sg-0a1, name: nodes}]}}`,
		field: "spec.securityGroupSelectorTerms[0].id", msg: "remove tags and name"},
	{name: "role and instance profile", base: baseClass, patch: `{spec: {instanceProfile: StowageNodeProfile}}`,
		field: "spec.role", msg: "set exactly one of role and instanceProfile"},
	{name: "neither role nor instance profile", base: baseClass, patch: `{spec: {role: null}}`,
		field: "spec.role", msg: "set exactly one of role and instanceProfile"},
	// Node class: metadata options.
	{name: "unknown httpTokens", base: baseClass, patch: `{spec: {metadataOptions: {httpTokens: sometimes}}}`,
		field: "spec.metadataOptions.httpTokens", msg: `supported values: "required", "optional"`},
	{name: "unknown httpEndpoint", base: baseClass, patch: `{spec: {metadataOptions: {httpEndpoint: "on"}}}`,
		field: "spec.metadataOptions.httpEndpoint", msg: `supported values: "enabled", "disabled"`},
	{name: "unknown httpProtocolIPv6", base: baseClass, patch: `{spec: {metadataOptions: {httpProtocolIPv6: "yes"}}}`,
		field: "spec.metadataOptions.httpProtocolIPv6", msg: `supported values: "enabled", "disabled"`},
	{name: "hop limit zero", base: baseClass, patch: `{spec: {metadataOptions: {httpPutResponseHopLimit: 0}}}`,
		field: "spec.metadataOptions.httpPutResponseHopLimit", msg: "greater than or equal to 1"},
	{name: "hop limit above 64", base: baseClass, patch: `{spec: {metadataOptions: {httpPutResponseHopLimit: 65}}}`,
		field: "spec.metadataOptions.httpPutResponseHopLimit", msg: "less than or equal to 64"},
	// Node class: kubelet.
	{name: "unknown reserved resource", base: baseClass, patch: kubelet(`{kubeReserved: {nvidia.com/gpu: "1"}}`),
		field: classKubelet + ".kubeReserved", msg: "cpu, memory, ephemeral-storage or pid"},
	{name: "negative reservation", base: baseClass, patch: kubelet(`{kubeReserved: {cpu: -100m}}`),
		field: classKubelet + ".kubeReserved", msg: "non-negative quantities such as 100m or 1Gi"},
	{name: "reservation not a quantity", base: baseClass, patch: kubelet(`{systemReserved: {memory: lots}}`),
		field: classKubelet + ".systemReserved", msg: "non-negative quantities such as 100m or 1Gi"},
	{name: "unknown eviction signal", base: baseClass, patch: kubelet(`{evictionHard: {memory.free: 10%}}`),
		field: classKubelet + ".evictionHard", msg: "memory.available, nodefs.available"},
	{name: "eviction percentage above 100", base: baseClass, patch: kubelet(`{evictionHard: {memory.available: 110%}}`),
		field: classKubelet + ".evictionHard", msg: "percentages must be from 0% to 100%"},
	{name: "negative eviction percentage", base: baseClass, patch: kubelet(`{evictionHard: {memory.available: -1%}}`),
		field: classKubelet + ".evictionHard", msg: "percentages must be from 0% to 100%"},
	{name: "negative eviction quantity", base: baseClass, patch: kubelet(`{evictionHard: {memory.available: -5Mi}}`),
		field: classKubelet + ".evictionHard", msg: "non-negative quantities such as 100Mi"},
	{name: "eviction threshold in words", base: baseClass, patch: kubelet(`{evictionHard: {nodefs.available: plenty}}`),
		field: classKubelet + ".evictionHard", msg: "non-negative quantities such as 100Mi"},
	{name: "negative maxPods", base: baseClass, patch: kubelet(`{maxPods: -1}`),
		field: classKubelet + ".maxPods", msg: "greater than or equal to 0"},
	{name: "negative podsPerCore", base: baseClass, patch: kubelet(`{podsPerCore: -1}`),
		field: classKubelet + ".podsPerCore", msg: "greater than or equal to 0"},
	{name: "unknown volume type", base: baseClass, patch: `{spec: {blockDeviceMappings: [{ebs: {volumeType: gp4}}]}}`,
		field: "spec.blockDeviceMappings[0].ebs.volumeType", msg: "supported values", admissionOnly: true},
	// Node claims share the requirement, taint, reference and duration types.
	{name: "claim In without values", base: baseClaim, patch: claimReqs(`{key: stowage.dev/instance-family, operator: In}`),
		field: "spec.requirements[0].values", msg: "In needs at least one value"},
	{name: "claim Gt with a word", base: baseClaim, patch: claimReqs(`{key: stowage.dev/instance-cpu, operator: Gt, values: [x]}`),
		field: "spec.requirements[0].values", msg: "exactly one non-negative integer"},
	{name: "claim value not a label value", base: baseClaim, patch: claimReqs(`{key: example.com/a, operator: In, values: ["a b"]}`),
		field: "spec.requirements", msg: "values must be label values"},
	{name: "claim taint effect", base: baseClaim, patch: `{spec: {taints: [{key: a, effect: Never}]}}`,
		field: "spec.taints", msg: "NoSchedule, PreferNoSchedule or NoExecute"},
	{name: "claim node class group", base: baseClaim, patch: `{spec: {nodeClassRef: {group: karpenter.k8s.aws}}}`,
		field: "spec.nodeClassRef.group", msg: "group must be stowage.dev"},
	{name: "claim terminationGracePeriod in words", base: baseClaim, patch: `{spec: {terminationGracePeriod: soon}}`,
		field: "spec.terminationGracePeriod", msg: "such as 30s, 10m or 48h"},
}

// validateOnlyCases are accepted at admission but rejected by Validate, which names
// field. The strings of corev1.Taint and label values have no maxLength, so matching
// them against a pattern would exceed the API server's CEL cost budget; the regexp
// for durations does not know Go's range; the minValues rule counts values as
// listed, Validate distinct ones.
var validateOnlyCases = []admissionCase{
	{name: "taint key with a space", base: basePool, patch: `{spec: {template: {spec: {taints: [{key: "my key", effect: NoSchedule}]}}}}`,
		field: "spec.template.spec.taints[0].key"},
	{name: "startup taint value with a slash", base: basePool, patch: `{spec: {template: {spec: {startupTaints: [{key: a, value: a/b, effect: NoSchedule}]}}}}`,
		field: "spec.template.spec.startupTaints[0].value"},
	{name: "label value with a space", base: basePool, patch: labels(`{team: "web team"}`),
		field: poolLabels + "[team]"},
	{name: "minValues counting a value listed twice", base: basePool, patch: reqs(`{key: stowage.dev/instance-family, operator: In, values: [c6i, c6i], minValues: 2}`),
		field: poolReq0 + ".minValues"},
	{name: "expireAfter beyond Go's range", base: basePool, patch: `{spec: {template: {spec: {expireAfter: 9999999h}}}}`},
	// A rule comparing minNodes with a limit, a quantity of any length, would
	// exceed the API server's CEL cost budget.
	{name: "a floor above the nodes limit", base: basePool, patch: `{spec: {minNodes: 3, limits: {nodes: "2"}}}`, field: "spec.minNodes"},
	{name: "a floor above an integer nodes limit", base: basePool, patch: `{spec: {minNodes: 3, limits: {nodes: 1}}}`, field: "spec.minNodes"},
}

// karpenterRejections are the adapted Karpenter manifests (testdata/karpenter-v1,
// by file and kind) that must be rejected: Stowage has no Windows images, and
// upstream's windows-custom-userdata.yaml names its node class group with a version.
var karpenterRejections = map[string]admissionCase{
	"windows-2019.yaml/NodeClass":            windowsAlias,
	"windows-2022.yaml/NodeClass":            windowsAlias,
	"windows-custom-userdata.yaml/NodeClass": windowsAlias,
	"windows-custom-userdata.yaml/NodePool": {
		field: "spec.template.spec.nodeClassRef.group", msg: "group must be stowage.dev"},
}

var windowsAlias = admissionCase{field: "spec.amiSelectorTerms[0].alias", msg: "family al2023 or bottlerocket"}

func (c admissionCase) String() string {
	if c.field == "" {
		return c.name + " (valid)"
	}
	return fmt.Sprintf("%s (%s: %s)", c.name, c.field, c.msg)
}
