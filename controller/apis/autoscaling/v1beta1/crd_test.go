package v1beta1_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/stowage-dev/stowage/controller/apis/autoscaling/crd"
	"github.com/stowage-dev/stowage/controller/apis/autoscaling/crd/crdcheck"
	"github.com/stowage-dev/stowage/controller/apis/autoscaling/v1beta1"
)

// TestTypesMatchTheCRD walks the upstream CRD's schema of every served
// version against the Go types, both ways: every property has a field of
// the same JSON name and kind, every field a property, and a required
// property is never omitted when empty. The CRD is Cluster Autoscaler's, so
// this is the check that the types are wire-compatible with it.
func TestTypesMatchTheCRD(t *testing.T) {
	def := crd.MustCapacityBuffer()
	if len(def.Spec.Versions) != 2 {
		t.Fatalf("the CRD has %d versions, want v1alpha1 and v1beta1", len(def.Spec.Versions))
	}
	for _, v := range def.Spec.Versions {
		if !slices.Contains(v1beta1.ServedVersions, v1beta1.Group+"/"+v.Name) || !v.Served {
			t.Errorf("version %s: served %v, not among %v", v.Name, v.Served, v1beta1.ServedVersions)
		}
		if v.Storage != (v.Name == v1beta1.SchemeGroupVersion.Version) {
			t.Errorf("version %s: storage %v; the client reads and writes %s", v.Name, v.Storage, v1beta1.SchemeGroupVersion.Version)
		}
		s := v.Schema.OpenAPIV3Schema
		for _, part := range []struct {
			name string
			typ  reflect.Type
		}{{"spec", reflect.TypeFor[v1beta1.CapacityBufferSpec]()}, {"status", reflect.TypeFor[v1beta1.CapacityBufferStatus]()}} {
			crdcheck.Walk(t, v.Name+"."+part.name, s.Properties[part.name], part.typ)
		}
	}
}

// TestTheCRDIsUpstreams checks the file against the checksum README.md
// records, so that it is replaced on purpose only.
func TestTheCRDIsUpstreams(t *testing.T) {
	sum := sha256.Sum256(crd.Raw())
	readme, err := os.ReadFile("../crd/README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), hex.EncodeToString(sum[:])) {
		t.Fatalf("the CRD's sha256 %x is not the one ../crd/README.md records: update the README with the commit it came from", sum)
	}
	if crd.MustCapacityBuffer().Name != crd.Name {
		t.Fatalf("the CRD is named %s, want %s", crd.MustCapacityBuffer().Name, crd.Name)
	}
}

// TestDecodesEitherVersion reads the proposal's example of each version
// strictly into the types.
func TestDecodesEitherVersion(t *testing.T) {
	for _, version := range v1beta1.ServedVersions {
		doc := "apiVersion: " + version + `
kind: CapacityBuffer
metadata: {name: vllm-headroom, namespace: inference}
spec:
  scalableRef: {apiGroup: apps, kind: Deployment, name: vllm}
  percentage: 10
  replicas: 1
  limits: {cpu: "64", nvidia.com/gpu: 8}
status:
  replicas: 1
  podTemplateGeneration: 3
  conditions:
    - {type: ReadyForProvisioning, status: "True", reason: AttributesSetSuccessfully, message: "", lastTransitionTime: "2026-11-01T02:00:00Z"}
`
		var cb v1beta1.CapacityBuffer
		if err := yaml.UnmarshalStrict([]byte(doc), &cb); err != nil {
			t.Fatalf("%s: %v", version, err)
		}
		gpus := cb.Spec.Limits["nvidia.com/gpu"]
		if cb.Spec.ScalableRef.Kind != "Deployment" || *cb.Spec.Percentage != 10 || gpus.Value() != 8 || *cb.Status.PodTemplateGeneration != 3 ||
			cb.Status.Conditions[0].Type != v1beta1.ConditionReadyForProvisioning {
			t.Fatalf("%s: decoded %+v", version, cb)
		}
	}
}
