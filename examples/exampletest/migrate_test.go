package exampletest_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/testenv"
	"github.com/stowage-dev/stowage/internal/tfbed"
	"github.com/stowage-dev/stowage/internal/tfcli"
)

// TestMigrateFromKarpenterExample runs examples/migrate-from-karpenter's
// steps with the real binaries: `stowage import karpenter karpenter.yaml |
// kubectl apply -f -` makes the Stowage objects, `stowage import karpenter
// --format hcl` writes exactly the committed pools.tf, and Terraform imports
// the five objects with nothing to add or change, plans no change after, and
// destroys them, leaving nothing behind.
func TestMigrateFromKarpenterExample(t *testing.T) {
	e := tfbed.Shared(t)
	ctx := context.Background()
	before, err := e.Objects(ctx)
	if err != nil {
		t.Fatal(err)
	}
	removeCRDs := e.InstallCRDs(t)
	src := filepath.Join("..", "migrate-from-karpenter")
	dir := tfcli.CopyModule(t, src, filepath.Join(t.TempDir(), "migrate-from-karpenter"))
	yaml, err := os.ReadFile(filepath.Join(src, "karpenter.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "karpenter.yaml"), yaml, 0o600); err != nil {
		t.Fatal(err)
	}

	manifests := stowage(t, e, dir, "import", "karpenter", "karpenter.yaml")
	kubectl(t, e, manifests, "apply", "-f", "-")
	hcl := stowage(t, e, dir, "import", "karpenter", "--format", "hcl", "karpenter.yaml")
	if committed, err := os.ReadFile(filepath.Join(src, "pools.tf")); err != nil || !bytes.Equal(committed, hcl) {
		t.Fatalf("examples/migrate-from-karpenter/pools.tf is not what the converter writes today (%v): run "+
			"`stowage import karpenter --format hcl karpenter.yaml > pools.tf` there and commit; it writes:\n%s", err, hcl)
	}

	checkFormatAndValidate(t, e, "migrate-from-karpenter", dir)
	vars := tfbed.Flags(map[string]string{"cluster_name": e.Bed.Cluster})
	applyAndPlanClean(t, e, dir, vars, "Plan: 5 to import, 0 to add, 0 to change, 0 to destroy")
	e.CLI.MustRun(t, dir, append([]string{"destroy", "-input=false", "-auto-approve"}, vars...)...)
	dyn, err := dynamic.NewForConfig(e.Bed.ControlPlane.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, plural := range []string{"nodepools", "nodeclasses"} {
		l, err := dyn.Resource(v1alpha1.SchemeGroupVersion.WithResource(plural)).List(ctx, metav1.ListOptions{})
		if err != nil || len(l.Items) > 0 {
			t.Errorf("after destroy: %v, %d %s left", err, len(l.Items), plural)
		}
	}
	removeCRDs()
	if !t.Failed() { // a failed test's leftovers are its cleanup's to destroy
		e.ExpectClean(t, before)
	}
}

// stowage runs the stowage binary built from this tree in dir and returns
// its standard output.
func stowage(t *testing.T, e *tfbed.Env, dir string, args ...string) []byte {
	t.Helper()
	bin, err := e.Stowage()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("stowage %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

// kubectl runs kubectl, as the cluster's administrator, with stdin.
func kubectl(t *testing.T, e *tfbed.Env, stdin []byte, args ...string) {
	t.Helper()
	bin, err := testenv.Assets(testenv.Kubectl)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(bin, testenv.Kubectl), append([]string{"--kubeconfig", e.Bed.ControlPlane.KubeconfigPath}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl %v: %v\n%s", args, err, out)
	}
}
