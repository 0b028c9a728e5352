package lambdazip_test

import (
	"archive/zip"
	"bytes"
	"strings"
	"testing"

	"github.com/stowage-dev/stowage/provider/internal/lambdazip"
)

// TestTheZipsAreEmbedded fails, naming make lambda, when the provider's test
// binary was compiled without the zips; with them, each holds bootstrap.
func TestTheZipsAreEmbedded(t *testing.T) {
	for arch := range lambdazip.Architectures {
		code, err := lambdazip.Code(arch)
		if err != nil {
			t.Fatalf("%v (run make lambda-embed, or make test)", err)
		}
		zr, err := zip.NewReader(bytes.NewReader(code), int64(len(code)))
		if err != nil {
			t.Fatalf("%s: %v", arch, err)
		}
		if len(zr.File) != 1 || zr.File[0].Name != "bootstrap" {
			t.Errorf("%s zip holds %d files, want bootstrap alone", arch, len(zr.File))
		}
		if len(lambdazip.SHA256(code)) != 44 {
			t.Errorf("%s digest %q is not base64 of 32 bytes", arch, lambdazip.SHA256(code))
		}
	}
	if _, err := lambdazip.Code("sparc"); err == nil || !strings.Contains(err.Error(), "x86_64 or arm64") {
		t.Errorf("an unknown architecture: %v", err)
	}
}
