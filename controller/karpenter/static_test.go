package karpenter_test

import (
	"testing"
)

// A static NodePool's replicas become a floor and a ceiling of that many
// nodes; a lower nodes limit the pool has stays, and is the floor too.
func TestStaticPoolIsAFloorAndACeiling(t *testing.T) {
	r, _ := importFile(t, "testdata/newer-policies.yaml")
	var found bool
	for _, o := range r.Objects {
		if o.NodePool == nil || o.NodePool.Name != "static" {
			continue
		}
		found = true
		spec := o.NodePool.Spec
		if spec.MinNodes == nil || *spec.MinNodes != 4 {
			t.Errorf("minNodes %v, want 4 (replicas: 4)", spec.MinNodes)
		}
		if q, ok := spec.Limits["nodes"]; !ok || q.Value() != 4 {
			t.Errorf("limits %v, want nodes: 4", spec.Limits)
		}
	}
	if !found {
		t.Fatal("NodePool static was not converted")
	}
}
