package simulate_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stowage-dev/stowage/controller/simulate"
	"github.com/stowage-dev/stowage/controller/simulate/report"
)

// karpenterObjects are scale-up-down.yaml's NodeClass and NodePool written as
// Karpenter's EC2NodeClass and NodePool.
const karpenterObjects = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: web
spec:
  amiSelectorTerms: [{alias: bottlerocket@latest}]
  role: NodeRole
  subnetSelectorTerms: [{tags: {stowage.dev/discovery: scale-up-down}}]
  securityGroupSelectorTerms: [{tags: {stowage.dev/discovery: scale-up-down}}]
  context: launch-context-name
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: web
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: web}
      requirements:
        - {key: node.kubernetes.io/instance-type, operator: In, values: [c6i.xlarge]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 1m
`

// TestKarpentersObjectsReplayAsStowagesEquivalents replays scale-up-down.yaml
// with its pool and class written as Karpenter's objects: the report is the
// same, byte for byte, and the field without an equivalent is a warning.
func TestKarpentersObjectsReplayAsStowagesEquivalents(t *testing.T) {
	base, err := os.ReadFile("testdata/scale-up-down.yaml")
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(base), "\n---\n")
	if len(docs) != 4 || !strings.Contains(docs[1], "kind: NodeClass") || !strings.Contains(docs[2], "kind: NodePool") {
		t.Fatalf("scale-up-down.yaml is no longer Scenario, NodeClass, NodePool, Deployment: update this test")
	}
	fromKarpenter := strings.Join([]string{docs[0], karpenterObjects, docs[3]}, "\n---\n")
	var reports [2]bytes.Buffer
	for i, text := range []string{string(base), fromKarpenter} {
		s, err := simulate.ReadScenario(strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 && (len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0].Error(), "spec.context: not converted")) {
			t.Errorf("warnings %v, want one on spec.context", s.Warnings)
		}
		if err := report.WriteJSON(&reports[i], run(t, s, false)); err != nil {
			t.Fatal(err)
		}
	}
	if reports[0].String() != reports[1].String() {
		t.Errorf("the report differs when the pool and class are Karpenter's:\n%s\nvs\n%s", reports[0].String(), reports[1].String())
	}
}
