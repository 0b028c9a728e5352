package moduletest_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/tfbed"
	"github.com/stowage-dev/stowage/internal/tfcli"
)

// TestMain shares one bed, with the GPU types the seed's pools name, among
// the package's tests.
func TestMain(m *testing.M) {
	os.Exit(tfbed.Main(m, tfbed.Options{InstanceTypes: tfbed.Catalogue("g5.12xlarge", "g5.24xlarge", "g6.12xlarge")}))
}

// env is the package's bed and a terraform CLI reaching it.
type env struct {
	*tfbed.Env
	tf  *tfcli.CLI
	dyn dynamic.Interface
}

func start(t *testing.T) *env {
	t.Helper()
	b := tfbed.Shared(t)
	dyn, err := dynamic.NewForConfig(b.Bed.ControlPlane.Config)
	if err != nil {
		t.Fatal(err)
	}
	return &env{Env: b, tf: b.CLI, dyn: dyn}
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

func (e *env) createNamespace(t *testing.T, name string) {
	t.Helper()
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
	_, err := e.dyn.Resource(corev1.SchemeGroupVersion.WithResource("namespaces")).Create(context.Background(), ns, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
}
