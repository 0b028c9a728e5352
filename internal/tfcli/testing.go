package tfcli

import (
	"os"
	"path/filepath"
	"testing"
)

// Start returns a CLI for t (failing it, naming `make tools`, when terraform
// is missing) reaching the cluster of kubeconfig.
func Start(t testing.TB, kubeconfig string) *CLI {
	t.Helper()
	c, err := New(t.TempDir(), kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// MustRun runs terraform and fails t on an error, with the output.
func (c *CLI) MustRun(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := c.Run(dir, args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return out
}

// CopyModule copies the .tf files of src into dir/name, keeping the module's
// own layout, and returns the new folder.
func CopyModule(t testing.TB, src, dir string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(src, "*.tf"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no .tf files in %s: %v", src, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
