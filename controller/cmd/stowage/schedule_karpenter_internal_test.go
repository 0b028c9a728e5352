package main

import (
	"strings"
	"testing"
)

// karpenterPool and karpenterClass are a Karpenter v1 NodePool and
// EC2NodeClass as kubectl prints them; stowagePool and stowageClass are their
// hand-written Stowage equivalents.
const (
	karpenterPool = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: web, uid: 4c1d, resourceVersion: "77"}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: web}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m]}
        - {key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["5"]}
        - {key: karpenter.k8s.aws/instance-cpu, operator: Lte, values: ["16"]}
  limits: {cpu: "64"}
  disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 30s}
status:
  resources: {cpu: "4", nodes: "1"}
`
	karpenterClass = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: web}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: KarpenterNodeRole-prod
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: prod}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: prod}}]
status:
  subnets: [{id: subnet-1, zone: us-east-1a}, {id: subnet-2, zone: us-east-1b}]
`
	stowagePool = `apiVersion: stowage.dev/v1alpha1
kind: NodePool
metadata: {name: web}
spec:
  template:
    spec:
      nodeClassRef: {name: web}
      requirements:
        - {key: stowage.dev/capacity-type, operator: In, values: [on-demand]}
        - {key: stowage.dev/instance-category, operator: In, values: [c, m]}
        - {key: stowage.dev/instance-generation, operator: Gt, values: ["5"]}
        - {key: stowage.dev/instance-cpu, operator: Lte, values: ["16"]}
  limits: {cpu: "64"}
  disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 30s}
`
	stowageClass = `apiVersion: stowage.dev/v1alpha1
kind: NodeClass
metadata: {name: web}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: KarpenterNodeRole-prod
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: prod}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: prod}}]
status:
  subnets: [{id: subnet-1, zone: us-east-1a}, {id: subnet-2, zone: us-east-1b}]
`
	// The pods select and spread on Karpenter's keys, as workloads written for it do.
	karpenterPods = `apiVersion: v1
kind: Pod
metadata: {name: api-0, namespace: web, labels: {app: api}}
spec:
  nodeSelector: {karpenter.sh/capacity-type: on-demand}
  topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: api}}}]
  containers: [{name: c, image: i, resources: {requests: {cpu: "3", memory: 6Gi}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: api-1, namespace: web, labels: {app: api}}
spec:
  nodeSelector: {karpenter.sh/capacity-type: on-demand}
  topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: api}}}]
  containers: [{name: c, image: i, resources: {requests: {cpu: "3", memory: 6Gi}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: batch-0, namespace: jobs}
spec:
  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: karpenter.k8s.aws/instance-category, operator: In, values: [c]}]}]}}}
  containers: [{name: c, image: i, resources: {requests: {cpu: "7", memory: 4Gi}}}]
`
)

// scheduleSnapshot decides on a snapshot written from parts.
func scheduleSnapshot(t *testing.T, parts ...string) (decision, string) {
	t.Helper()
	return scheduleJSON(t, "--snapshot", writeFile(t, "snapshot.yaml", strings.Join(parts, "---\n")))
}

// TestScheduleDecidesAlikeOnKarpentersObjects runs one decision on a dump
// written with Karpenter's objects and one on their Stowage equivalents: the
// JSON must be the same, byte for byte.
func TestScheduleDecidesAlikeOnKarpentersObjects(t *testing.T) {
	fromKarpenter, k := scheduleSnapshot(t, karpenterClass, karpenterPool, karpenterPods)
	_, s := scheduleSnapshot(t, stowageClass, stowagePool, karpenterPods)
	if k != s {
		t.Errorf("on Karpenter's objects:\n%s\non their Stowage equivalents:\n%s", k, s)
	}
	if len(fromKarpenter.NodeClaims) == 0 || len(fromKarpenter.Unschedulable) != 0 {
		t.Fatalf("decision %s: want claims for every pod", k)
	}
	for _, nc := range fromKarpenter.NodeClaims {
		if nc.CapacityType != "on-demand" || !strings.HasPrefix(nc.InstanceTypes[0], "c") && !strings.HasPrefix(nc.InstanceTypes[0], "m") {
			t.Errorf("claim %s: %s %v; the pool allows on-demand c and m only", nc.Name, nc.CapacityType, nc.InstanceTypes)
		}
	}
	code, _, stderr := stowage(t, "schedule", "--snapshot", writeFile(t, "k.yaml", strings.Join([]string{karpenterClass, karpenterPool, karpenterPods}, "---\n")))
	if code != 0 || strings.Contains(stderr, "warning") {
		t.Errorf("exit %d, stderr %q: a plain dump converts without warnings", code, stderr)
	}
}

// TestKarpenterNodeClaimsAreInFlightCapacity: a NodeClaim Karpenter launched
// and whose node has not registered yet takes pending pods, as Stowage's own
// in-flight claims do, rather than a new launch.
func TestKarpenterNodeClaimsAreInFlightCapacity(t *testing.T) {
	claim := `apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata:
  name: web-x7k2p
  labels: {karpenter.sh/nodepool: web, karpenter.sh/capacity-type: on-demand, node.kubernetes.io/instance-type: m6i.4xlarge, topology.kubernetes.io/zone: us-east-1a}
spec:
  nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: web}
  requirements:
    - {key: karpenter.sh/nodepool, operator: In, values: [web]}
    - {key: node.kubernetes.io/instance-type, operator: In, values: [m6i.4xlarge]}
    - {key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a]}
    - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
status:
  providerID: aws:///us-east-1a/i-0abc
  capacity: {cpu: "16", memory: 64Gi, pods: "234"}
  allocatable: {cpu: 15890m, memory: 57Gi, pods: "234"}
`
	pending := `apiVersion: v1
kind: Pod
metadata: {name: small-0, namespace: web}
spec:
  nodeSelector: {karpenter.sh/capacity-type: on-demand}
  containers: [{name: c, image: i, resources: {requests: {cpu: "2", memory: 4Gi}}}]
`
	d, out := scheduleSnapshot(t, karpenterClass, karpenterPool, claim, pending)
	if len(d.NodeClaims) != 0 || len(d.Existing) != 1 || d.Existing[0].Node != "web-x7k2p" {
		t.Errorf("decision %s: want the pod on the in-flight claim web-x7k2p and nothing launched", out)
	}
}
