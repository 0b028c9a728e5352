package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"testing"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

// TestTheSBOMListsTheBinarysModulesAndIsReproducible writes the SBOM of this
// test binary twice: the bytes are equal, and CycloneDX's decoder reads the
// fixed serial number and timestamp and every module Go's build info lists.
func TestTheSBOMListsTheBinarysModulesAndIsReproducible(t *testing.T) {
	binary, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	created := time.Unix(1767225600, 0).UTC()
	var out [2][]byte
	for i := range out {
		path := filepath.Join(t.TempDir(), "sbom.cdx.json")
		if err := write(path, binary, "v1.2.3", "abc123", created); err != nil {
			t.Fatal(err)
		}
		if out[i], err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Error("two SBOMs of one binary, version and commit differ")
	}
	var bom cdx.BOM
	if err := cdx.NewBOMDecoder(bytes.NewReader(out[0]), cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^urn:uuid:[0-9a-f-]{36}$`).MatchString(bom.SerialNumber) || bom.SpecVersion != cdx.SpecVersion1_6 {
		t.Errorf("serial number %q, spec %v: want a UUID URN and CycloneDX 1.6", bom.SerialNumber, bom.SpecVersion)
	}
	if bom.Metadata == nil || bom.Metadata.Timestamp != "2026-01-01T00:00:00Z" {
		t.Errorf("metadata %+v: want the timestamp 2026-01-01T00:00:00Z", bom.Metadata)
	}
	listed := map[string]string{}
	if bom.Components != nil {
		for _, c := range *bom.Components {
			listed[c.Name] = c.Version
		}
	}
	info, ok := debug.ReadBuildInfo()
	if !ok || len(info.Deps) == 0 {
		t.Fatal("this test binary has no build info to compare with")
	}
	t.Logf("%d modules in build info, %d components", len(info.Deps), len(listed))
	for _, m := range info.Deps {
		if m.Replace == nil && listed[m.Path] != m.Version {
			t.Errorf("module %s %s is listed at %q", m.Path, m.Version, listed[m.Path])
		}
	}
}
