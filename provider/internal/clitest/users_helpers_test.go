package clitest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/tfcli"
)

// header is what every configuration of these tests starts with: the
// provider from the mirror, reaching the control plane by KUBE_CONFIG_PATH.
const header = `
terraform {
  required_providers {
    stowage = { source = "stowage-dev/stowage" }
  }
}
`

// userDir writes a root configuration (header, then body) into a new folder
// and runs terraform init there.
func (e *cliEnv) userDir(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	e.write(t, dir, body)
	e.MustRun(t, dir, "init", "-input=false")
	return dir
}

// write replaces the configuration of dir.
func (e *cliEnv) write(t *testing.T, dir, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(header+body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// kubectlObject creates a Stowage object as kubectl would (its field manager
// kubectl-client-side-apply), deleted when the test ends.
func (e *cliEnv) kubectlObject(t *testing.T, kind, plural, name string, spec map[string]any) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": v1alpha1.SchemeGroupVersion.String(), "kind": kind,
		"metadata": map[string]any{"name": name}, "spec": spec}}
	ctx := context.Background()
	if _, err := e.dyn.Resource(gvr(plural)).Create(ctx, obj, metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.dyn.Resource(gvr(plural)).Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

// classSpec is a NodeClass spec the API server accepts.
func classSpec() map[string]any {
	return map[string]any{"role": "StowageNodeRole-users",
		"amiSelectorTerms":           []any{map[string]any{"alias": "al2023@latest"}},
		"subnetSelectorTerms":        []any{map[string]any{"tags": map[string]any{"stowage.dev/discovery": "users"}}},
		"securityGroupSelectorTerms": []any{map[string]any{"tags": map[string]any{"stowage.dev/discovery": "users"}}}}
}

// poolSpec is a NodePool spec of class with requirements.
func poolSpec(class string, requirements ...any) map[string]any {
	return map[string]any{"template": map[string]any{"spec": map[string]any{
		"nodeClassRef": map[string]any{"group": v1alpha1.Group, "kind": "NodeClass", "name": class},
		"requirements": requirements}}}
}

func (e *cliEnv) get(t *testing.T, plural, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := e.dyn.Resource(gvr(plural)).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading %s %s: %v", plural, name, err)
	}
	return u
}

func (e *cliEnv) exists(t *testing.T, plural, name string) bool {
	t.Helper()
	_, err := e.dyn.Resource(gvr(plural)).Get(context.Background(), name, metav1.GetOptions{})
	return err == nil
}

// claim creates a NodeClaim of pool (and class) with labels, the pool's
// current template hash recorded, and finalizers when given.
func (e *cliEnv) claim(t *testing.T, name, pool, class string, labels map[string]string, finalizers ...string) {
	t.Helper()
	var np v1alpha1.NodePool
	if err := fromUnstructured(e.get(t, "nodepools", pool), &np); err != nil {
		t.Fatal(err)
	}
	l := map[string]any{v1alpha1.LabelNodePool: pool}
	for k, v := range labels {
		l[k] = v
	}
	fin := make([]any, 0, len(finalizers))
	for _, f := range finalizers {
		fin = append(fin, f)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": v1alpha1.SchemeGroupVersion.String(), "kind": "NodeClaim",
		"metadata": map[string]any{"name": name, "labels": l, "finalizers": fin,
			"annotations": map[string]any{v1alpha1.AnnotationNodePoolHash: v1alpha1.NodePoolHash(&np), v1alpha1.AnnotationHashVersion: v1alpha1.HashVersion},
			"ownerReferences": []any{map[string]any{"apiVersion": v1alpha1.SchemeGroupVersion.String(), "kind": "NodePool", "name": pool,
				"uid": string(np.UID)}}},
		"spec": map[string]any{"nodeClassRef": map[string]any{"group": v1alpha1.Group, "kind": "NodeClass", "name": class}}}}
	if _, err := e.dyn.Resource(gvr("nodeclaims")).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.release(t, name) })
}

// release removes a claim's finalizers and deletes it.
func (e *cliEnv) release(t *testing.T, name string) {
	ctx := context.Background()
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	_, _ = e.dyn.Resource(gvr("nodeclaims")).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	_ = e.dyn.Resource(gvr("nodeclaims")).Delete(ctx, name, metav1.DeleteOptions{})
}

// expectFail runs terraform, wanting it to fail with every fragment in its
// (unwrapped) output; it returns the output.
func (e *cliEnv) expectFail(t *testing.T, dir string, fragments []string, args ...string) string {
	t.Helper()
	out, err := e.Run(dir, args...)
	if err == nil {
		t.Fatalf("terraform %s succeeded; want it to fail:\n%s", strings.Join(args, " "), out)
	}
	expectSays(t, out, fragments...)
	return out
}

// expectSays wants every fragment in out, compared with terraform's wrapping undone.
func expectSays(t *testing.T, out string, fragments ...string) {
	t.Helper()
	flat := tfcli.OneLine(out)
	for _, f := range fragments {
		if !strings.Contains(flat, tfcli.OneLine(f)) {
			t.Errorf("the output does not say %q:\n%s", f, out)
		}
	}
}

func requirement(key, op string, values ...string) map[string]any {
	vs := make([]any, len(values))
	for i, v := range values {
		vs[i] = v
	}
	return map[string]any{"key": key, "operator": op, "values": vs}
}

func fromUnstructured(u *unstructured.Unstructured, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)
}

// eventually polls check until it passes, failing t with its last error after
// e2eSettle.
func (e *cliEnv) eventually(t *testing.T, check func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, e2eSettle, true, func(context.Context) (bool, error) {
		last = check()
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("after %v: %v", e2eSettle, last)
	}
}

func unstructuredString(obj map[string]any, fields ...string) (string, bool, error) {
	return unstructured.NestedString(obj, fields...)
}

// classResource is a stowage_node_class the API server accepts.
func classResource(resourceName, name string) string {
	return fmt.Sprintf(`
resource "stowage_node_class" %q {
  name = %q
  role = "StowageNodeRole-users"
  ami_selector_term {
    alias = "al2023@latest"
  }
  subnet_selector_term {
    tags = { "stowage.dev/discovery" = "users" }
  }
  security_group_selector_term {
    tags = { "stowage.dev/discovery" = "users" }
  }
}
`, resourceName, name)
}
