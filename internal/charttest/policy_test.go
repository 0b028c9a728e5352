package charttest

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// The install guide's NodeClass and NodePool, for the bed's cluster.
const (
	nodeClass = `
apiVersion: stowage.dev/v1alpha1
kind: NodeClass
metadata: {name: default}
spec:
  role: ROLE
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {stowage.dev/discovery: bed}}]
  securityGroupSelectorTerms: [{tags: {stowage.dev/discovery: bed}}]
`
	nodePool = `
apiVersion: stowage.dev/v1alpha1
kind: NodePool
metadata: {name: general}
spec:
  template:
    spec:
      nodeClassRef: {name: default}
      requirements:
      - {key: stowage.dev/instance-family, operator: In, values: [c6i, m6i]}
      - {key: stowage.dev/capacity-type, operator: In, values: [on-demand]}
`
)

func policy(t *testing.T, nodeRole string) []client.Object {
	t.Helper()
	var class v1alpha1.NodeClass
	var pool v1alpha1.NodePool
	if err := yaml.UnmarshalStrict([]byte(nodeClass), &class); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict([]byte(nodePool), &pool); err != nil {
		t.Fatal(err)
	}
	class.Spec.Role = nodeRole
	return []client.Object{&class, &pool}
}
