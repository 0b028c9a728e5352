package v1_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/stowage-dev/stowage/controller/apis/autoscaling/crd"
	"github.com/stowage-dev/stowage/controller/apis/autoscaling/crd/crdcheck"
	provreqv1 "github.com/stowage-dev/stowage/controller/apis/autoscaling/v1"
)

// TestTypesMatchTheCRD walks the upstream CRD's schema of both served
// versions (v1, and the deprecated v1beta1 of the same schema) against the
// Go types, both ways: the check that they are wire-compatible with Cluster
// Autoscaler's.
func TestTypesMatchTheCRD(t *testing.T) {
	def := crd.MustProvisioningRequest()
	if len(def.Spec.Versions) != 2 {
		t.Fatalf("the CRD has %d versions, want v1 and v1beta1", len(def.Spec.Versions))
	}
	for _, v := range def.Spec.Versions {
		if v.Storage != (v.Name == provreqv1.SchemeGroupVersion.Version) {
			t.Errorf("version %s: storage %v; the client reads and writes %s", v.Name, v.Storage, provreqv1.SchemeGroupVersion.Version)
		}
		s := v.Schema.OpenAPIV3Schema
		crdcheck.Walk(t, v.Name+".spec", s.Properties["spec"], reflect.TypeFor[provreqv1.ProvisioningRequestSpec]())
		crdcheck.Walk(t, v.Name+".status", s.Properties["status"], reflect.TypeFor[provreqv1.ProvisioningRequestStatus]())
	}
}

// TestTheCRDIsUpstreams checks the file against the checksum README.md
// records, so that it is replaced on purpose only.
func TestTheCRDIsUpstreams(t *testing.T) {
	sum := sha256.Sum256(crd.RawProvisioningRequest())
	readme, err := os.ReadFile("../crd/README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), hex.EncodeToString(sum[:])) {
		t.Fatalf("the CRD's sha256 %x is not the one ../crd/README.md records: update the README with the commit it came from", sum)
	}
	if got := crd.MustProvisioningRequest().Name; got != crd.ProvisioningRequestName {
		t.Fatalf("the CRD is named %s, want %s", got, crd.ProvisioningRequestName)
	}
}

// TestDecodesWhatKueueWrites reads a request as Kueue's ProvisioningRequest
// admission check creates it, strictly, into the types.
func TestDecodesWhatKueueWrites(t *testing.T) {
	doc := `apiVersion: autoscaling.x-k8s.io/v1
kind: ProvisioningRequest
metadata: {name: job-train-6d4d1-provision-1, namespace: training}
spec:
  provisioningClassName: best-effort-atomic-scale-up.autoscaling.x-k8s.io
  parameters: {ValidUntilSeconds: "600"}
  podSets:
    - podTemplateRef: {name: ppt-job-train-6d4d1-provision-1-main}
      count: 4
status:
  conditions:
    - {type: Provisioned, status: "True", reason: Provisioned, message: "", lastTransitionTime: "2026-11-01T02:00:00Z"}
  provisioningClassDetails: {zone: us-east-1a}
`
	var pr provreqv1.ProvisioningRequest
	if err := yaml.UnmarshalStrict([]byte(doc), &pr); err != nil {
		t.Fatal(err)
	}
	if pr.Spec.ProvisioningClassName != provreqv1.AtomicScaleUpClass || pr.Spec.PodSets[0].Count != 4 ||
		pr.Spec.PodSets[0].PodTemplateRef.Name != "ppt-job-train-6d4d1-provision-1-main" ||
		pr.Spec.Parameters[provreqv1.ValidUntilSecondsParameter] != "600" || pr.Status.Conditions[0].Type != provreqv1.Provisioned {
		t.Fatalf("decoded %+v", pr)
	}
}
