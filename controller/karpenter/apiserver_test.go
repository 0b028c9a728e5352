package karpenter_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/stowage-dev/stowage/controller/apis/crds"
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/testenv"
)

// TestConvertedObjectsAreAcceptedByTheAPIServer sends every object converted
// from testdata to a real kube-apiserver serving Stowage's CRDs, with strict
// field validation (dry run: the names repeat from file to file), and wants
// each accepted as written: placeholders and all.
func TestConvertedObjectsAreAcceptedByTheAPIServer(t *testing.T) {
	cp := testenv.Start(t, testenv.Options{})
	defs, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := envtest.InstallCRDs(cp.Config, envtest.CRDInstallOptions{CRDs: defs}); err != nil {
		t.Fatalf("installing the CRDs: %v", err)
	}
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	kube, err := client.New(cp.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	accepted := 0
	for _, file := range testdataFiles(t) {
		r, _ := importFile(t, file)
		for _, o := range r.Objects {
			var obj client.Object = o.NodePool
			if o.NodeClass != nil {
				obj = o.NodeClass
			}
			if err := kube.Create(t.Context(), obj, client.DryRunAll, client.FieldValidation("Strict")); err != nil {
				t.Errorf("%s: %s refused by the API server: %v", file, stowageID(o), err)
				continue
			}
			accepted++
		}
	}
	if accepted == 0 {
		t.Fatal("no object was sent")
	}
	t.Logf("%d converted objects accepted", accepted)
}
