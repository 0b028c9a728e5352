// Package clitest drives the terraform CLI as a user does, with the provider
// built from this tree and installed through a filesystem mirror, against a
// real kube-apiserver: examples/policy from init to destroy.
package clitest

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stowage-dev/stowage/controller/apis/crds"
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/iamcheck"
	"github.com/stowage-dev/stowage/internal/testenv"
	"github.com/stowage-dev/stowage/internal/tfcli"
)

// TestPolicyExampleOffline runs examples/policy as a newcomer would: an apply
// before Stowage is installed fails naming stowage_controller; then init,
// plan (showing the policy's cost) and apply; a change that drifts running
// nodes and raises the cost is a warning in the plan; destroying a pool that
// has nodes is refused until allowed.
func TestPolicyExampleOffline(t *testing.T) {
	env := newCLIEnv(t)
	dir := tfcli.Merge(t, "../../../examples/policy")
	env.MustRun(t, dir, "init", "-input=false")

	out, err := env.Run(dir, "apply", "-input=false", "-auto-approve")
	if err == nil || !strings.Contains(tfcli.OneLine(out), "stowage_controller") || !strings.Contains(tfcli.OneLine(out), "Stowage is not installed in the cluster") {
		t.Fatalf("apply without the CRDs: err %v, want an error naming stowage_controller; output:\n%s", err, out)
	}
	env.installCRDs(t)

	plan := env.MustRun(t, dir, "plan", "-input=false", "-out=tfplan")
	if !strings.Contains(plan, "Plan: 5 to add, 0 to change, 0 to destroy") || !strings.Contains(plan, "data.stowage_plan.peak: Read complete") {
		t.Fatalf("the first plan does not add the 5 objects with the plan data source read during the plan:\n%s", plan)
	}
	env.MustRun(t, dir, "apply", "-input=false", "tfplan")
	before, err := strconv.ParseFloat(strings.TrimSpace(env.MustRun(t, dir, "output", "-raw", "cost_per_hour")), 64)
	if err != nil || before <= 0 {
		t.Fatalf("cost_per_hour after apply: %v, %v", before, err)
	}
	if again := env.MustRun(t, dir, "plan", "-input=false", "-detailed-exitcode"); !strings.Contains(again, "No changes") {
		t.Fatalf("a plan after apply is not empty:\n%s", again)
	}

	env.launchClaims(t, "web-spot", 3)
	change := []string{"plan", "-input=false", "-var", "web_spot_cpu_limit=16", "-var", `web_labels={tier="web",team="storefront"}`}
	drift := env.MustRun(t, dir, change...)
	t.Logf("terraform plan of a change that drifts nodes and raises the cost:\n%s", drift)
	if !strings.Contains(tfcli.OneLine(drift), "this change drifts the 3 nodes of pool web-spot; they will be replaced within the pool's budgets") {
		t.Errorf("the plan does not warn about the 3 drifted nodes of web-spot:\n%s", drift)
	}
	if after := outputCost(t, drift); after <= before {
		t.Errorf("cost_per_hour %.4f -> %.4f: lowering the spot pool's limit should raise it", before, after)
	}
	writeCapture(t, drift)

	out, err = env.Run(dir, "destroy", "-input=false", "-auto-approve")
	if err == nil || !strings.Contains(tfcli.OneLine(out), "Pool web-spot still has 3 nodes") || !strings.Contains(out, "allow_destroy_with_nodes") {
		t.Fatalf("destroy of a pool with nodes: err %v, want a refusal naming allow_destroy_with_nodes; output:\n%s", err, out)
	}
	env.deleteClaims(t)
	env.MustRun(t, dir, "destroy", "-input=false", "-auto-approve")
	env.expectNoStowageObjects(t)
}

var costLine = regexp.MustCompile(`~ cost_per_hour\s+=\s+[0-9.]+\s+->\s+([0-9.]+)`)

// outputCost reads the new value of the cost_per_hour output from a plan that changes it.
func outputCost(t *testing.T, plan string) float64 {
	t.Helper()
	m := costLine.FindStringSubmatch(plan)
	if m == nil {
		t.Fatalf("no cost_per_hour output in the plan:\n%s", plan)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// writeCapture keeps the plan output for the docs when STOWAGE_CAPTURE_PLAN names a file.
func writeCapture(t *testing.T, plan string) {
	if path := os.Getenv("STOWAGE_CAPTURE_PLAN"); path != "" {
		if err := os.WriteFile(path, []byte(plan), 0o600); err != nil {
			t.Errorf("writing the plan capture: %v", err)
		}
	}
}

// launchClaims creates n NodeClaims of pool, recording the hash of the pool
// the API server holds, as the controller does at launch.
func (e *cliEnv) launchClaims(t *testing.T, pool string, n int) {
	t.Helper()
	ctx := context.Background()
	u, err := e.dyn.Resource(gvr("nodepools")).Get(ctx, pool, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var np v1alpha1.NodePool
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &np); err != nil {
		t.Fatal(err)
	}
	hash := v1alpha1.NodePoolHash(&np)
	for i := range n {
		claim := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": v1alpha1.SchemeGroupVersion.String(), "kind": "NodeClaim",
			"metadata": map[string]any{
				"name":        fmt.Sprintf("%s-%d", pool, i),
				"labels":      map[string]any{v1alpha1.LabelNodePool: pool},
				"annotations": map[string]any{v1alpha1.AnnotationNodePoolHash: hash, v1alpha1.AnnotationHashVersion: v1alpha1.HashVersion},
			},
			"spec": map[string]any{"nodeClassRef": map[string]any{"name": np.Spec.Template.Spec.NodeClassRef.Name}},
		}}
		if _, err := e.dyn.Resource(gvr("nodeclaims")).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func (e *cliEnv) deleteClaims(t *testing.T) {
	t.Helper()
	err := e.dyn.Resource(gvr("nodeclaims")).DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

func (e *cliEnv) expectNoStowageObjects(t *testing.T) {
	t.Helper()
	for _, plural := range []string{"nodepools", "nodeclasses"} {
		list, err := e.dyn.Resource(gvr(plural)).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) > 0 {
			t.Errorf("%d %s left after destroy", len(list.Items), plural)
		}
	}
}

func (e *cliEnv) installCRDs(t *testing.T) {
	t.Helper()
	all, err := crds.CRDs()
	if err == nil {
		_, err = envtest.InstallCRDs(e.cp.Config, envtest.CRDInstallOptions{CRDs: all})
	}
	if err != nil {
		t.Fatalf("installing the CRDs: %v", err)
	}
}

// cliEnv is a control plane and a terraform CLI (internal/tfcli) reaching it.
type cliEnv struct {
	*tfcli.CLI
	dir string // scratch: the mirror and the CLI configuration
	cp  *testenv.ControlPlane
	dyn dynamic.Interface
}

// shared is the package's one environment, started by the first test that
// needs it and stopped by TestMain.
var shared struct {
	once sync.Once
	env  *cliEnv
	err  error
}

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard()) // envtest's CRD installer logs through controller-runtime
	code := iamcheck.Main(m)
	if e := shared.env; e != nil {
		_ = e.cp.Stop()
		_ = os.RemoveAll(e.dir)
	}
	os.Exit(code)
}

func newCLIEnv(t *testing.T) *cliEnv {
	t.Helper()
	shared.once.Do(func() { shared.env, shared.err = startCLIEnv() })
	if shared.err != nil {
		t.Fatal(shared.err) // a missing component names `make tools`
	}
	return shared.env
}

func startCLIEnv() (*cliEnv, error) {
	bin, err := testenv.Assets(testenv.Terraform, testenv.Etcd, testenv.KubeAPIServer)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "stowage-clitest-")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp, err := testenv.StartControlPlane(ctx, testenv.Options{BinDir: bin})
	if err != nil {
		return nil, fmt.Errorf("starting the control plane: %w", err)
	}
	e := &cliEnv{cp: cp, dir: dir}
	if e.dyn, err = dynamic.NewForConfig(cp.Config); err != nil {
		return e, err
	}
	e.CLI, err = tfcli.New(dir, cp.KubeconfigPath)
	return e, err
}

func gvr(plural string) schema.GroupVersionResource {
	return v1alpha1.SchemeGroupVersion.WithResource(plural)
}
