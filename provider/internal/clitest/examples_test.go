package clitest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stowage-dev/stowage/internal/tfcli"
)

// TestRegistryExamplesValidate runs `terraform validate` on the examples the
// generated docs show (examples/provider, resources, data-sources), together,
// as the docs use them: each names objects the others declare. Validation
// runs the provider's plan-time checks, so an example the API would reject
// fails here.
func TestRegistryExamplesValidate(t *testing.T) {
	env := newCLIEnv(t)
	dirs := []string{"../../../examples/provider"}
	for _, pattern := range []string{"../../../examples/resources/*", "../../../examples/data-sources/*"} {
		found, err := filepath.Glob(pattern)
		if err != nil || len(found) == 0 {
			t.Fatalf("no examples under %s: %v", pattern, err)
		}
		dirs = append(dirs, found...)
	}
	dir := tfcli.Merge(t, dirs...)
	// The docs' examples leave the source address to the reader's configuration.
	versions := "terraform {\n  required_providers {\n    stowage = { source = \"stowage-dev/stowage\" }\n  }\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "versions.tf"), []byte(versions), 0o600); err != nil {
		t.Fatal(err)
	}
	env.MustRun(t, dir, "init", "-input=false")
	if out := env.MustRun(t, dir, "validate"); !strings.Contains(out, "The configuration is valid") {
		t.Fatalf("terraform validate:\n%s", out)
	}
}
