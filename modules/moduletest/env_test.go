package moduletest_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/stowage-dev/stowage/controller/apis/crds"
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/testenv"
	"github.com/stowage-dev/stowage/internal/tfcli"
)

// env is a control plane with Stowage's CRDs and a terraform CLI reaching it.
type env struct {
	tf  *tfcli.CLI
	dyn dynamic.Interface
}

func start(t *testing.T) *env {
	t.Helper()
	cp := testenv.Start(t, testenv.Options{})
	all, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := envtest.InstallCRDs(cp.Config, envtest.CRDInstallOptions{CRDs: all}); err != nil {
		t.Fatalf("installing the CRDs: %v", err)
	}
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	return &env{tf: tfcli.Start(t, cp.KubeconfigPath), dyn: dyn}
}

// root writes a root configuration calling the module at ../<module>, copied
// beside it as ./<module>.
func root(t *testing.T, module, mainTF string) string {
	t.Helper()
	dir := t.TempDir()
	tfcli.CopyModule(t, filepath.Join("..", module), filepath.Join(dir, module))
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(mainTF), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func (e *env) list(t *testing.T, plural string) []unstructured.Unstructured {
	t.Helper()
	l, err := e.dyn.Resource(v1alpha1.SchemeGroupVersion.WithResource(plural)).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func (e *env) get(t *testing.T, plural, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := e.dyn.Resource(v1alpha1.SchemeGroupVersion.WithResource(plural)).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading %s %s: %v", plural, name, err)
	}
	return u
}
