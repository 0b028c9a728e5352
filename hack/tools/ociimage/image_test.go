package main

import (
	"archive/tar"
	"crypto/x509"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

func testOptions(t *testing.T, out string) options {
	t.Helper()
	dir := t.TempDir()
	bins := binaries{}
	for _, arch := range []string{"amd64", "arm64"} {
		p := filepath.Join(dir, arch)
		if err := os.WriteFile(p, []byte("not really stowage for "+arch), 0o755); err != nil {
			t.Fatal(err)
		}
		bins["linux/"+arch] = p
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	return options{Out: out, Binaries: bins, Zoneinfo: filepath.Join(strings.TrimSpace(string(goroot)), "lib", "time", "zoneinfo.zip"),
		Version: "v1.2.3", Commit: "0123abcd", Created: 1700000000, Source: "https://github.com/stowage-dev/stowage", Licenses: "Apache-2.0"}
}

func TestTheSameInputsGiveTheSameDigests(t *testing.T) {
	first, err := write(testOptions(t, filepath.Join(t.TempDir(), "a")))
	if err != nil {
		t.Fatal(err)
	}
	second, err := write(testOptions(t, filepath.Join(t.TempDir(), "b")))
	if err != nil {
		t.Fatal(err)
	}
	if first != second {
		t.Fatalf("two builds of the same inputs: %s and %s", first, second)
	}
	o := testOptions(t, filepath.Join(t.TempDir(), "c"))
	o.Commit = "fedc9876"
	if third, _ := write(o); third == first {
		t.Fatal("another commit gives the same digest: the revision label is not in the image")
	}
}

func TestEachPlatformIsTheBinaryOnTheBaseAsUser65532(t *testing.T) {
	o := testOptions(t, filepath.Join(t.TempDir(), "layout"))
	digest, err := write(o)
	if err != nil {
		t.Fatal(err)
	}
	lp, err := layout.FromPath(o.Out)
	if err != nil {
		t.Fatal(err)
	}
	h, err := v1.NewHash(digest)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := lp.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	if top, _ := idx.IndexManifest(); len(top.Manifests) != 1 || top.Manifests[0].Digest != h {
		t.Fatalf("index.json lists %+v, want the index %s alone", top.Manifests, digest)
	}
	inner, err := idx.ImageIndex(h)
	if err != nil {
		t.Fatal(err)
	}
	im, err := inner.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 2 {
		t.Fatalf("the index lists %d images, want amd64 and arm64", len(im.Manifests))
	}
	for _, d := range im.Manifests {
		img, err := inner.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		checkConfig(t, img, d.Platform.Architecture)
		files := filesOf(t, img)
		if string(files["stowage"]) != "not really stowage for "+d.Platform.Architecture {
			t.Errorf("%s: /stowage holds %q", d.Platform.Architecture, files["stowage"])
		}
		for name := range files {
			if strings.HasPrefix(name, "bin/") || strings.HasSuffix(name, "/sh") {
				t.Errorf("%s: the image has %s", d.Platform.Architecture, name)
			}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(files["etc/ssl/certs/ca-certificates.crt"]) || len(pool.Subjects()) < 100 { //nolint:staticcheck // counting
			t.Errorf("the CA bundle holds %d roots", len(pool.Subjects())) //nolint:staticcheck // counting
		}
		if len(files["usr/share/zoneinfo/America/New_York"]) == 0 {
			t.Error("the image has no time zone America/New_York")
		}
	}
}

func checkConfig(t *testing.T, img v1.Image, arch string) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if cf.Architecture != arch || cf.OS != "linux" || c.User != "65532:65532" || strings.Join(c.Entrypoint, " ") != "/stowage" ||
		strings.Join(c.Cmd, " ") != "run" || cf.Created.Unix() != 1700000000 {
		t.Errorf("%s: config %+v created %v", arch, c, cf.Created)
	}
	for k, want := range map[string]string{"org.opencontainers.image.source": "https://github.com/stowage-dev/stowage",
		"org.opencontainers.image.revision": "0123abcd", "org.opencontainers.image.version": "v1.2.3",
		"org.opencontainers.image.licenses": "Apache-2.0"} {
		if c.Labels[k] != want {
			t.Errorf("%s: label %s is %q, want %q", arch, k, c.Labels[k], want)
		}
	}
}

// filesOf reads every regular file of the image's layers, checking owners and times.
func filesOf(t *testing.T, img v1.Image) map[string][]byte {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			hdr, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if hdr.ModTime.Unix() != 1700000000 || (hdr.Uid != 0 && hdr.Uid != 65532) {
				t.Errorf("%s: time %v, owner %d", hdr.Name, hdr.ModTime, hdr.Uid)
			}
			if hdr.Typeflag == tar.TypeReg {
				files[hdr.Name], _ = io.ReadAll(tr)
			}
		}
		_ = rc.Close()
	}
	return files
}
