package karpenter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/stowage-dev/stowage/controller/apis/crds"
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/karpenter"
	"github.com/stowage-dev/stowage/internal/testenv"
	"github.com/stowage-dev/stowage/internal/tfcli"
)

const providerBlock = "terraform {\n  required_providers {\n    stowage = { source = \"stowage-dev/stowage\" }\n  }\n}\n\nprovider \"stowage\" {}\n"

// TestHCLAdoptsTheObjectsInTheCluster takes every file of testdata that
// converts, creates its Stowage objects in a real kube-apiserver as kubectl
// would (placeholders substituted), and runs the written HCL through the real
// terraform CLI with the provider built from this tree: it validates, its
// first plan only imports (nothing to add, change or destroy), apply adopts
// the objects, a second plan shows no change, and destroy removes them.
func TestHCLAdoptsTheObjectsInTheCluster(t *testing.T) {
	cp := testenv.Start(t, testenv.Options{})
	defs, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := envtest.InstallCRDs(cp.Config, envtest.CRDInstallOptions{CRDs: defs}); err != nil {
		t.Fatalf("installing the CRDs: %v", err)
	}
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	tf := tfcli.Start(t, cp.KubeconfigPath)
	adopted := 0
	for _, file := range testdataFiles(t) {
		r, text := writeHCL(t, file)
		if len(r.Objects) == 0 {
			continue
		}
		t.Run(strings.TrimPrefix(file, "testdata/"), func(t *testing.T) {
			t.Cleanup(func() { deleteAll(t, dyn) })
			vars, classesBefore := createAsKubectl(t, dyn, r)
			dir := t.TempDir()
			write(t, filepath.Join(dir, "main.tf"), text)
			write(t, filepath.Join(dir, "versions.tf"), providerBlock)
			tf.MustRun(t, dir, "init", "-input=false")
			if out := tf.MustRun(t, dir, "validate"); !strings.Contains(out, "The configuration is valid") {
				t.Fatalf("terraform validate:\n%s", out)
			}
			if adopted == 0 {
				checkSchemaMatchesProvider(t, tf, dir)
			}
			args := []string{"-input=false"}
			for name, value := range vars {
				args = append(args, "-var", name+"="+value)
			}
			plan := tf.MustRun(t, dir, append([]string{"plan", "-out=tfplan"}, args...)...)
			want := fmt.Sprintf("Plan: %d to import, 0 to add, 0 to change, 0 to destroy", len(r.Objects))
			if !strings.Contains(plan, want) {
				t.Fatalf("the first plan does not only import (%q):\n%s", want, plan)
			}
			tf.MustRun(t, dir, "apply", "-input=false", "tfplan")
			if again, err := tf.Run(dir, append([]string{"plan", "-detailed-exitcode"}, args...)...); err != nil || !strings.Contains(again, "No changes") {
				t.Fatalf("a plan after the import is not empty (%v):\n%s", err, again)
			}
			tf.MustRun(t, dir, append([]string{"destroy", "-auto-approve"}, args...)...)
			for plural, want := range map[string]int{"nodepools": 0, "nodeclasses": classesBefore} {
				l, err := dyn.Resource(v1alpha1.SchemeGroupVersion.WithResource(plural)).List(context.Background(), metav1.ListOptions{})
				if err != nil || len(l.Items) != want {
					t.Fatalf("after destroy: %v, %d %s left, want %d", err, len(l.Items), plural, want)
				}
			}
			adopted += len(r.Objects)
		})
	}
	if adopted == 0 {
		t.Fatal("no object was adopted")
	}
	t.Logf("%d converted objects imported, applied with no change, and destroyed", adopted)
}

// deleteAll removes what a failed step left, so that the next file starts clean.
func deleteAll(t *testing.T, dyn dynamic.Interface) {
	for _, plural := range []string{"nodepools", "nodeclasses"} {
		err := dyn.Resource(v1alpha1.SchemeGroupVersion.WithResource(plural)).DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{})
		if err != nil {
			t.Errorf("deleting the %s: %v", plural, err)
		}
	}
}

var placeholderRE = regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$[A-Z_][A-Z0-9_]*`)

// createAsKubectl creates the converted objects with their placeholders
// substituted (user data aside, as the HCL keeps it), as `envsubst | kubectl
// create` would, and returns the Terraform variables that stand for them.
// A pool whose NodeClass the file does not convert finds it in the cluster,
// as in the user's (the provider refuses a pool whose class is nowhere): it
// returns how many such classes it made, which the configuration leaves be.
func createAsKubectl(t *testing.T, dyn dynamic.Interface, r *karpenter.Result) (map[string]string, int) {
	t.Helper()
	vars := map[string]string{}
	converted, referenced := map[string]bool{}, map[string]bool{}
	for _, o := range r.Objects {
		if o.NodeClass != nil {
			converted[o.NodeClass.Name] = true
		} else {
			referenced[o.NodePool.Spec.Template.Spec.NodeClassRef.Name] = true
		}
	}
	existing := 0
	for name := range referenced {
		if !converted[name] {
			createExistingClass(t, dyn, name)
			existing++
		}
	}
	for _, o := range r.Objects {
		var obj any = o.NodePool
		plural := "nodepools"
		if o.NodeClass != nil {
			obj, plural = o.NodeClass, "nodeclasses"
		}
		var m map[string]any
		if b, err := json.Marshal(obj); err != nil || json.Unmarshal(b, &m) != nil {
			t.Fatalf("marshalling %s: %v", o.Source.ID(), err)
		}
		delete(m, "status")
		substitute(m, "", vars)
		_, err := dyn.Resource(v1alpha1.SchemeGroupVersion.WithResource(plural)).Create(context.Background(),
			&unstructured.Unstructured{Object: m}, metav1.CreateOptions{FieldManager: "kubectl-create"})
		if err != nil {
			t.Fatalf("creating %s: %v", o.Source.ID(), err)
		}
	}
	return vars, existing
}

// createExistingClass creates a NodeClass the cluster already has.
func createExistingClass(t *testing.T, dyn dynamic.Interface, name string) {
	t.Helper()
	selector := []any{map[string]any{"tags": map[string]any{"karpenter.sh/discovery": "test"}}}
	class := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.SchemeGroupVersion.String(), "kind": "NodeClass", "metadata": map[string]any{"name": name},
		"spec": map[string]any{"amiSelectorTerms": []any{map[string]any{"alias": "al2023@latest"}}, "role": "KarpenterNodeRole-test",
			"subnetSelectorTerms": selector, "securityGroupSelectorTerms": selector},
	}}
	if _, err := dyn.Resource(v1alpha1.SchemeGroupVersion.WithResource("nodeclasses")).Create(context.Background(), class,
		metav1.CreateOptions{FieldManager: "kubectl-create"}); err != nil {
		t.Fatalf("creating the existing NodeClass %s: %v", name, err)
	}
}

func substitute(v any, path string, vars map[string]string) any {
	switch x := v.(type) {
	case string:
		if path == ".spec.userData" {
			return x
		}
		return placeholderRE.ReplaceAllStringFunc(x, func(p string) string {
			name := strings.ToLower(strings.Trim(p, "${}"))
			vars[name] = "test-" + strings.ReplaceAll(name, "_", "-")
			return vars[name]
		})
	case map[string]any:
		for k, e := range x {
			x[k] = substitute(e, path+"."+k, vars)
		}
	case []any:
		for i, e := range x {
			x[i] = substitute(e, path, vars)
		}
	}
	return v
}

// checkSchemaMatchesProvider holds the HCL writer's view of each resource's
// schema against the provider's, from `terraform providers schema -json`.
func checkSchemaMatchesProvider(t *testing.T, tf *tfcli.CLI, dir string) {
	t.Helper()
	out := tf.MustRun(t, dir, "providers", "schema", "-json")
	var doc struct {
		Schemas map[string]struct {
			Resources map[string]struct{ Block tfBlock } `json:"resource_schemas"`
		} `json:"provider_schemas"`
	}
	if err := json.NewDecoder(bytes.NewReader([]byte(out))).Decode(&doc); err != nil {
		t.Fatalf("reading the provider schema: %v", err)
	}
	p := doc.Schemas["registry.terraform.io/stowage-dev/stowage"]
	for kind, typ := range map[string]string{"NodePool": "stowage_node_pool", "NodeClass": "stowage_node_class"} {
		mine, err := karpenter.HCLSchemaPaths(kind)
		if err != nil {
			t.Fatal(err)
		}
		provider := p.Resources[typ].Block.paths("")
		// The provider's own attributes, which no object field maps onto.
		provider = slices.DeleteFunc(provider, func(s string) bool { return s == "id" || s == "allow_destroy_with_nodes" || s == "adopt_existing" })
		sort.Strings(mine)
		sort.Strings(provider)
		if !slices.Equal(mine, provider) {
			t.Errorf("%s: the HCL writer's schema differs from the provider's:\nwriter:   %v\nprovider: %v", typ, mine, provider)
		}
	}
}

type tfBlock struct {
	Attributes map[string]json.RawMessage `json:"attributes"`
	BlockTypes map[string]struct {
		Block tfBlock `json:"block"`
	} `json:"block_types"`
}

func (b tfBlock) paths(prefix string) []string {
	var out []string
	join := func(n string) string {
		if prefix == "" {
			return n
		}
		return prefix + "." + n
	}
	for n := range b.Attributes {
		out = append(out, join(n))
	}
	for n, bt := range b.BlockTypes {
		out = append(out, join(n))
		out = append(out, bt.Block.paths(join(n))...)
	}
	return out
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
