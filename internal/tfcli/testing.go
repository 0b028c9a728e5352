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

// CopyModule copies the .tf files of src into dir (made if needed), as a
// module a root configuration beside it calls, and returns dir.
func CopyModule(t testing.TB, src, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFiles(t, src, dir, "")
	return dir
}

// Merge copies the .tf files of the given folders into one new folder, each
// file prefixed by its folder's name when there are several, so that none
// collide: the registry's examples, each naming objects the others declare,
// become one configuration.
func Merge(t testing.TB, from ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, src := range from {
		prefix := ""
		if len(from) > 1 {
			prefix = filepath.Base(src) + "_"
		}
		copyFiles(t, src, dir, prefix)
	}
	return dir
}

func copyFiles(t testing.TB, src, dir, prefix string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(src, "*.tf"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no .tf files in %s: %v", src, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, prefix+filepath.Base(f)), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
