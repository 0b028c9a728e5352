package testenv_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stowage-dev/stowage/internal/testenv"
)

// TestRIERunsABootstrap builds a small Go function as provided.al2023 runs
// it and invokes it under aws-lambda-rie: its answer, its environment
// (exactly the one given), and its error as RIE reports it.
func TestRIERunsABootstrap(t *testing.T) {
	testenv.RequireAssets(t, testenv.LambdaRIE)
	dir := t.TempDir()
	build := exec.Command("go", "build", "-tags", "lambda.norpc", "-o", filepath.Join(dir, "bootstrap"), "./testdata/echofunction")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the function: %v\n%s", err, out)
	}
	t.Setenv("KUBECONFIG", "/leaked/from/the/test")
	rie, err := testenv.StartRIE(dir, []string{"GREETING=hello", "AWS_LAMBDA_FUNCTION_NAME=echo"})
	if err != nil {
		t.Fatal(err)
	}
	defer rie.Close()
	ctx := context.Background()
	out, err := rie.Invoke(ctx, []byte(`{"n":1}`))
	if err != nil || !strings.Contains(string(out), `"payload":{"n":1}`) || !strings.Contains(string(out), `"greeting":"hello"`) {
		t.Fatalf("invoking: %s, %v", out, err)
	}
	if strings.Contains(string(out), "leaked") {
		t.Errorf("the test's environment reached the function: %s", out)
	}
	_, err = rie.Invoke(ctx, []byte(`"fail"`))
	var fe *testenv.FunctionError
	if !errors.As(err, &fe) || fe.Message != "asked to fail" {
		t.Errorf("a failing invocation: %v, want a FunctionError saying asked to fail", err)
	}
	if logs := rie.Logs(); !strings.Contains(logs, "START RequestId") {
		t.Errorf("RIE's log has no START line:\n%s", logs)
	}
}
