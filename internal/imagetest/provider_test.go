package imagetest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stowage-dev/stowage/internal/tfbed"
	"github.com/stowage-dev/stowage/internal/tfcli"
)

// releaseVersion is the version the released provider is built at here.
const releaseVersion = "0.1.0"

// checkReleasedProvider builds the provider for this machine as make release
// ships it (hack/release.sh provider, the image's index digest stamped in),
// checks its checksums with sha256sum and its manifest, and installs its zip
// as terraform installs a Registry's, from a packed filesystem mirror: the
// plan's default image is the release's, pinned by the digest, with no
// development warning.
func checkReleasedProvider(t *testing.T, e *tfbed.Env, vars []string, digest string) {
	t.Helper()
	out := t.TempDir()
	cmd := exec.Command("bash", "hack/release.sh", "provider", "v"+releaseVersion, digest, out, runtime.GOOS+"/"+runtime.GOARCH)
	cmd.Dir = filepath.Join("..", "..")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("release.sh provider: %v\n%s", err, b)
	}
	prefix := "terraform-provider-stowage_" + releaseVersion
	check := exec.Command("sha256sum", "--check", "--strict", prefix+"_SHA256SUMS")
	check.Dir = out
	if b, err := check.CombinedOutput(); err != nil {
		t.Errorf("sha256sum --check %s_SHA256SUMS: %v\n%s", prefix, err, b)
	}
	checkManifest(t, filepath.Join(out, prefix+"_manifest.json"))

	zip := fmt.Sprintf("%s_%s_%s.zip", prefix, runtime.GOOS, runtime.GOARCH)
	mirror := filepath.Join(t.TempDir(), "mirror")
	packed := filepath.Join(mirror, "registry.terraform.io", "stowage-dev", "stowage")
	if err := os.MkdirAll(packed, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(out, zip), filepath.Join(packed, zip)); err != nil {
		t.Fatalf("the release has no %s: %v", zip, err)
	}
	cli := releasedCLI(t, e.CLI, mirror)
	dir := tfcli.Merge(t, "testdata")
	if init := tfcli.OneLine(cli.MustRun(t, dir, "init", "-input=false")); !strings.Contains(init, "Installed stowage-dev/stowage v"+releaseVersion) {
		t.Errorf("terraform init did not install the released provider from its zip:\n%s", init)
	}
	plan := tfcli.OneLine(cli.MustRun(t, dir, append([]string{"plan", "-input=false"}, vars...)...))
	want := fmt.Sprintf(`image = "ghcr.io/stowage-dev/stowage:v%s@%s"`, releaseVersion, digest)
	if !strings.Contains(plan, want) || strings.Contains(plan, "Development build") {
		t.Errorf("the released provider's plan does not deploy %s without a warning:\n%s", want, plan)
	} else {
		t.Logf("the provider installed from %s plans %s", zip, want)
	}
}

// checkManifest: the Registry's manifest says the provider speaks protocol 6.
func checkManifest(t *testing.T, path string) {
	t.Helper()
	var m struct {
		Version  int `json:"version"`
		Metadata struct {
			ProtocolVersions []string `json:"protocol_versions"`
		} `json:"metadata"`
	}
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil || m.Version != 1 || !slices.Equal(m.Metadata.ProtocolVersions, []string{"6.0"}) {
		t.Errorf("%s is %s (%v), want version 1 and protocol_versions [6.0]", filepath.Base(path), b, err)
	}
}

// releasedCLI is the bed's terraform, installing the provider from mirror
// (the packed layout: zips, as downloaded from a registry) instead.
func releasedCLI(t *testing.T, bed *tfcli.CLI, mirror string) *tfcli.CLI {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "terraformrc")
	text := fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path    = %q\n    include = [\"stowage-dev/stowage\"]\n  }\n}\n", mirror)
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cli := *bed
	cli.Env = append(slices.Clone(bed.Env), "TF_CLI_CONFIG_FILE="+cfg)
	return &cli
}
