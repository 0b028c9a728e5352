package simulate_test

import (
	"strings"
	"testing"

	"github.com/stowage-dev/stowage/controller/simulate"
	"github.com/stowage-dev/stowage/controller/simulate/report"
)

// crowded fills a pool at its limit (two c6i.xlarge, 3.92 allocatable CPU
// each) with six 1-CPU pods of low priority, then asks for two 1-CPU pods of
// high priority that no node has room for and the pool cannot launch.
const crowded = `
apiVersion: simulate.stowage.dev/v1alpha1
kind: Scenario
metadata: {name: crowded}
spec:
  duration: 20m
  seed: 5
  workloads:
    - deployment: batch
      replicas: [{at: 1m, count: 6}]
    - deployment: web
      replicas: [{at: 8m, count: 2}]
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 10
---
apiVersion: stowage.dev/v1alpha1
kind: NodeClass
metadata: {name: general}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: NodeRole
  subnetSelectorTerms: [{tags: {stowage.dev/discovery: crowded}}]
  securityGroupSelectorTerms: [{tags: {stowage.dev/discovery: crowded}}]
---
apiVersion: stowage.dev/v1alpha1
kind: NodePool
metadata: {name: general}
spec:
  limits: {cpu: "8"}
  template:
    spec:
      nodeClassRef: {group: stowage.dev, kind: NodeClass, name: general}
      requirements:
        - {key: node.kubernetes.io/instance-type, operator: In, values: [c6i.xlarge]}
        - {key: stowage.dev/capacity-type, operator: In, values: [on-demand]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: batch, namespace: default}
spec:
  selector: {matchLabels: {app: batch}}
  template:
    metadata: {labels: {app: batch}}
    spec:
      priorityClassName: low
      containers:
        - {name: batch, image: registry.example.com/batch:1, resources: {requests: {cpu: "1", memory: 1Gi}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      priorityClassName: high
      containers:
        - {name: web, image: registry.example.com/web:1, resources: {requests: {cpu: "1", memory: 1Gi}}}
`

func crowdedRun(t *testing.T, doc string) (batch, web report.Tier) {
	t.Helper()
	s, err := simulate.ReadScenario(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	for _, tier := range system(t, run(t, s, false), simulate.SystemStowage).Tiers {
		switch tier.Name {
		case "batch":
			batch = tier
		case "web":
			web = tier
		}
	}
	return batch, web
}

// TestAHigherPriorityPodPreemptsTheFewestLowerOnes follows the Pod Priority
// and Preemption page: a pending pod that fits nowhere evicts pods of lower
// priority from a node when that is the only way it fits, as few as make
// room (each 1-CPU web pod needs one batch pod gone, not a node's three).
// The batch pods' replacements find no room and the pool buys none: they
// never run.
func TestAHigherPriorityPodPreemptsTheFewestLowerOnes(t *testing.T) {
	batch, web := crowdedRun(t, crowded)
	if web.PodsStarted != 2 || web.PodsNeverRan != 0 {
		t.Errorf("web: %d ran, %d never did; want both to run by preempting", web.PodsStarted, web.PodsNeverRan)
	}
	if batch.PodsStarted != 6 || batch.PodsNeverRan != 2 {
		t.Errorf("batch: %d ran, %d never did; want 6 and the 2 replacements of the 2 preempted", batch.PodsStarted, batch.PodsNeverRan)
	}
}

// TestPreemptionPolicyNeverPreemptsNobody: "Pods with preemptionPolicy:
// Never will be placed in the scheduling queue ahead of lower-priority pods,
// but they cannot preempt other pods."
func TestPreemptionPolicyNeverPreemptsNobody(t *testing.T) {
	doc := strings.Replace(crowded, "metadata: {name: high}\nvalue: 1000\n", "metadata: {name: high}\nvalue: 1000\npreemptionPolicy: Never\n", 1)
	batch, web := crowdedRun(t, doc)
	if web.PodsStarted != 0 || web.PodsNeverRan != 2 {
		t.Errorf("web: %d ran, %d never did; want none to run", web.PodsStarted, web.PodsNeverRan)
	}
	if batch.PodsStarted != 6 || batch.PodsNeverRan != 0 {
		t.Errorf("batch: %d ran, %d never did; want all 6 left running", batch.PodsStarted, batch.PodsNeverRan)
	}
}

// TestEqualPriorityPreemptsNobody: preemption only evicts pods of lower
// priority.
func TestEqualPriorityPreemptsNobody(t *testing.T) {
	batch, web := crowdedRun(t, strings.Replace(crowded, "priorityClassName: low", "priorityClassName: high", 1))
	if web.PodsStarted != 0 || batch.PodsNeverRan != 0 {
		t.Errorf("web ran %d, batch never ran %d; want 0 and 0", web.PodsStarted, batch.PodsNeverRan)
	}
}

// TestAPDBDoesNotStopPreemption: kube-scheduler respects PodDisruptionBudgets
// on a best-effort basis; when only violating one makes room, the lower
// priority pods are removed anyway.
func TestAPDBDoesNotStopPreemption(t *testing.T) {
	doc := crowded + `---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: batch, namespace: default}
spec:
  maxUnavailable: 0
  selector: {matchLabels: {app: batch}}
`
	batch, web := crowdedRun(t, doc)
	if web.PodsStarted != 2 || batch.PodsNeverRan != 2 {
		t.Errorf("web ran %d, batch never ran %d; want 2 and 2", web.PodsStarted, batch.PodsNeverRan)
	}
}

// TestTheQueueTakesTheHighestPriorityFirst: "the scheduler orders pending
// Pods by their priority and a pending Pod is placed ahead of other pending
// Pods with lower priority in the scheduling queue". Both workloads arrive
// together, the low one first, with room for six of the eight pods and no
// preemption (Never): the two high-priority pods run, two low ones never do.
func TestTheQueueTakesTheHighestPriorityFirst(t *testing.T) {
	doc := strings.Replace(crowded, "metadata: {name: high}\nvalue: 1000\n", "metadata: {name: high}\nvalue: 1000\npreemptionPolicy: Never\n", 1)
	doc = strings.Replace(doc, "replicas: [{at: 8m, count: 2}]", "replicas: [{at: 1m, count: 2}]", 1)
	batch, web := crowdedRun(t, doc)
	if web.PodsStarted != 2 || batch.PodsStarted != 4 || batch.PodsNeverRan != 2 {
		t.Errorf("web ran %d, batch ran %d and %d never did; want 2, 4 and 2", web.PodsStarted, batch.PodsStarted, batch.PodsNeverRan)
	}
}
