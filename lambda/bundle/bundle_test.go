package bundle_test

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stowage-dev/stowage/lambda/bundle"
)

func TestZipHoldsAnExecutableBootstrapAndNothingElse(t *testing.T) {
	var buf bytes.Buffer
	if err := bundle.Write(&buf, []byte("#!/bin/sh\necho hi\n")); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if len(zr.File) != 1 || zr.File[0].Name != bundle.Entry || zr.File[0].Mode().Perm() != 0o755 || !zr.File[0].Modified.Equal(bundle.Modified) {
		t.Fatalf("zip entries %+v, want one executable bootstrap at the fixed time", zr.File)
	}
	f, _ := zr.File[0].Open()
	body, _ := io.ReadAll(f)
	if string(body) != "#!/bin/sh\necho hi\n" {
		t.Errorf("bootstrap holds %q", body)
	}
	var again bytes.Buffer
	_ = bundle.Write(&again, []byte("#!/bin/sh\necho hi\n"))
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("two zips of the same bootstrap differ")
	}
}

// TestMakeLambdaIsReproducible runs `make lambda` twice, into two folders
// (LAMBDA_DIR, as the Terraform provider's build does), for this machine's
// architecture, and compares the zips byte for byte.
func TestMakeLambdaIsReproducible(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("make is not installed: %v", err)
	}
	var sums [2]string
	for i := range sums {
		dir := t.TempDir()
		cmd := exec.Command("make", "-s", "lambda", "LAMBDA_DIR="+dir, "LAMBDA_ARCHS="+runtime.GOARCH)
		cmd.Dir = filepath.Join("..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("make lambda: %v\n%s", err, out)
		}
		data, err := os.ReadFile(filepath.Join(dir, "stowage-interruption-lambda-"+runtime.GOARCH+".zip"))
		if err != nil {
			t.Fatal(err)
		}
		sums[i] = fmt.Sprintf("%x (%d bytes)", sha256.Sum256(data), len(data))
	}
	if sums[0] != sums[1] {
		t.Fatalf("two builds of the same commit differ: %s and %s", sums[0], sums[1])
	}
	t.Logf("stowage-interruption-lambda-%s.zip: sha256 %s", runtime.GOARCH, sums[0])
}
