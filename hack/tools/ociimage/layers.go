package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"encoding/pem"
	"fmt"
	"io"
	"os"
	"path"
	"runtime/debug"
	"slices"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// file is one entry of a layer.
type file struct {
	name     string // without a leading slash; a directory ends in /
	mode     int64
	uid      int
	contents []byte
}

// layer writes files (and the directories above them) as a tar with fixed
// times and owners, in name order, and wraps it as an OCI layer.
func layer(files []file, modified time.Time) (v1.Layer, error) {
	all := withParents(files)
	slices.SortFunc(all, func(a, b file) int { return compareNames(a.name, b.name) })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range all {
		hdr := &tar.Header{Name: f.name, Mode: f.mode, Uid: f.uid, Gid: f.uid, ModTime: modified, Format: tar.FormatPAX}
		if f.name[len(f.name)-1] == '/' {
			hdr.Typeflag = tar.TypeDir
		} else {
			hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(f.contents))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.contents); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithMediaType(types.OCILayer))
}

// withParents adds a 0755 root-owned entry for every directory above a
// file that files do not list themselves.
func withParents(files []file) []file {
	listed := map[string]bool{}
	for _, f := range files {
		listed[f.name] = true
	}
	out := slices.Clone(files)
	for _, f := range files {
		for dir := path.Dir(path.Clean(f.name)); dir != "." && dir != "/"; dir = path.Dir(dir) {
			if !listed[dir+"/"] {
				listed[dir+"/"] = true
				out = append(out, file{name: dir + "/", mode: 0o755})
			}
		}
	}
	return out
}

// compareNames orders paths as a walk of the tree does: a directory right
// before what it holds.
func compareNames(a, b string) int {
	return slices.Compare(splitPath(a), splitPath(b))
}

func splitPath(p string) []string {
	var parts []string
	for p = path.Clean(p); p != "." && p != "/"; p = path.Dir(p) {
		parts = append([]string{path.Base(p)}, parts...)
	}
	return parts
}

// baseLayer is what every platform shares: CA bundle, time zones, users.
func baseLayer(o options) (v1.Layer, error) {
	ca, err := caBundle()
	if err != nil {
		return nil, err
	}
	zones, err := zoneFiles(o.Zoneinfo)
	if err != nil {
		return nil, err
	}
	files := append([]file{
		{name: "etc/passwd", mode: 0o644, contents: []byte("root:x:0:0:root:/root:/sbin/nologin\n" +
			"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{name: "etc/group", mode: 0o644, contents: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{name: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, contents: ca},
		{name: "home/nonroot/", mode: 0o700, uid: uid},
		{name: "tmp/", mode: 0o1777},
	}, zones...)
	return layer(files, o.created())
}

// binaryLayer holds the stowage binary at /stowage.
func binaryLayer(binary string, modified time.Time) (v1.Layer, error) {
	data, err := os.ReadFile(binary)
	if err != nil {
		return nil, fmt.Errorf("reading the binary: %w", err)
	}
	return layer([]file{{name: "stowage", mode: 0o755, contents: data}}, modified)
}

// caBundle is the Mozilla NSS roots of golang.org/x/crypto/x509roots/fallback
// at the version go.sum pins, as PEM. A root with a distrust-after date is
// left out: a PEM file cannot carry the date, and trusting it without would
// trust what NSS no longer does.
func caBundle() ([]byte, error) {
	var certs bytes.Buffer
	n, skipped := 0, 0
	for r := range bundle.Roots() {
		if r.Constraint != nil {
			skipped++
			continue
		}
		if err := pem.Encode(&certs, &pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate}); err != nil {
			return nil, err
		}
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("golang.org/x/crypto/x509roots/fallback/bundle holds no roots")
	}
	header := fmt.Sprintf("# %d roots of Mozilla's NSS trust store from golang.org/x/crypto/x509roots/fallback %s;\n"+
		"# %d with a distrust-after date are left out.\n", n, moduleVersion("golang.org/x/crypto/x509roots/fallback"), skipped)
	return append([]byte(header), certs.Bytes()...), nil
}

func moduleVersion(path string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			if m.Path == path {
				return m.Version
			}
		}
	}
	return "(version unknown)"
}

// zoneFiles unpacks Go's zoneinfo.zip into usr/share/zoneinfo, where
// time.LoadLocation looks first.
func zoneFiles(zoneinfo string) ([]file, error) {
	zr, err := zip.OpenReader(zoneinfo)
	if err != nil {
		return nil, fmt.Errorf("opening Go's time zone database: %w", err)
	}
	defer zr.Close()
	var out []file
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(rc)
		_ = rc.Close()
		if err != nil {
			return nil, fmt.Errorf("reading %s from %s: %w", f.Name, zoneinfo, err)
		}
		out = append(out, file{name: path.Join("usr/share/zoneinfo", path.Clean(f.Name)), mode: 0o644, contents: data})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no time zones", zoneinfo)
	}
	return out, nil
}
