package exampletest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stowage-dev/stowage/internal/tfbed"
	"github.com/stowage-dev/stowage/internal/tfcli"
)

// TestMain shares one bed, offering the GPU types the examples' pools name,
// among the package's tests.
func TestMain(m *testing.M) {
	os.Exit(tfbed.Main(m, tfbed.Options{InstanceTypes: tfbed.Catalogue("g5.12xlarge", "g5.24xlarge", "g6.12xlarge")}))
}

// layout copies an example and the modules it calls into a new folder,
// keeping their places relative to each other (examples/<name>,
// modules/<module>), and returns the example's folder there.
func layout(t *testing.T, example string) string {
	t.Helper()
	dir := t.TempDir()
	for _, m := range []string{"stowage", "node-pools"} {
		tfcli.CopyModule(t, filepath.Join("..", "..", "modules", m), filepath.Join(dir, "modules", m))
	}
	return tfcli.CopyModule(t, filepath.Join("..", example), filepath.Join(dir, "examples", example))
}

// clusterVars are the variables that describe the bed as an existing
// cluster, as the examples take them.
func clusterVars(e *tfbed.Env) map[string]string {
	v := e.Values()
	return map[string]string{"cluster_name": v["cluster_name"], "cluster_endpoint": v["cluster_endpoint"],
		"cluster_certificate_authority_data": v["cluster_ca"], "oidc_provider_arn": v["oidc_provider_arn"],
		"interruption_handler_architecture": v["lambda_architecture"], "allow_destroy_with_nodes": "true"}
}

// checkFormatAndValidate runs terraform fmt -check on the example's files
// and terraform validate on the initialised copy.
func checkFormatAndValidate(t *testing.T, e *tfbed.Env, example, dir string) {
	t.Helper()
	if out, err := e.CLI.Run("..", "fmt", "-check", "-recursive", example); err != nil {
		t.Errorf("terraform fmt -check: files not formatted:\n%s", out)
	}
	e.CLI.MustRun(t, dir, "init", "-input=false")
	if out := e.CLI.MustRun(t, dir, "validate"); !strings.Contains(out, "The configuration is valid") {
		t.Fatalf("terraform validate:\n%s", out)
	}
}

// applyAndPlanClean plans (wanting each of want in the plan's output),
// applies the plan, and plans again, wanting no change.
func applyAndPlanClean(t *testing.T, e *tfbed.Env, dir string, vars []string, want ...string) string {
	t.Helper()
	plan := e.CLI.MustRun(t, dir, append([]string{"plan", "-input=false", "-out=tfplan"}, vars...)...)
	for _, w := range want {
		if !strings.Contains(plan, w) {
			t.Fatalf("the plan does not say %q:\n%s", w, plan)
		}
	}
	e.CLI.MustRun(t, dir, "apply", "-input=false", "tfplan")
	if again, err := e.CLI.Run(dir, append([]string{"plan", "-input=false", "-detailed-exitcode"}, vars...)...); err != nil || !strings.Contains(again, "No changes") {
		t.Fatalf("a plan after apply is not empty (%v):\n%s", err, again)
	}
	return plan
}

func output[T any](t *testing.T, e *tfbed.Env, dir, name string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(e.CLI.MustRun(t, dir, "output", "-json", name)), &v); err != nil {
		t.Fatalf("output %s: %v", name, err)
	}
	return v
}
