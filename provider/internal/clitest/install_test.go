package clitest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// guide is the installation guide these steps come from.
const guide = "../../../docs/guides/provider-install.md"

// TestProviderInstallGuide follows docs/guides/provider-install.md with
// terraform 1.5.7: `make provider` writes the mirror at the version it
// stamps, the guide's CLI configuration installs it with `terraform init`
// (a module call included) at that version; and, with the guide's
// dev_overrides, a plan works without init while init fails.
func TestProviderInstallGuide(t *testing.T) {
	e := newCLIEnv(t)
	text, err := os.ReadFile(guide)
	if err != nil {
		t.Fatal(err)
	}
	mirror := t.TempDir()
	make := exec.Command("make", "-s", "provider", "PROVIDER_MIRROR="+mirror)
	make.Dir = "../../.."
	if out, err := make.CombinedOutput(); err != nil {
		t.Fatalf("make provider: %v\n%s", err, out)
	}
	cfg := cliConfig(t, string(text), "mirror", "/path/to/stowage/bin/terraform-mirror", mirror)
	cli := *e.CLI
	cli.Env = append(slices.Clone(e.CLI.Env), "TF_CLI_CONFIG_FILE="+cfg)
	dir := t.TempDir()
	module := filepath.Join(dir, "pools")
	writeFile(t, filepath.Join(module, "main.tf"), "terraform {\n  required_providers {\n    stowage = { source = \"stowage-dev/stowage\" }\n  }\n}\n"+
		"data \"stowage_instance_types\" \"m\" {}\noutput \"n\" {\n  value = length(data.stowage_instance_types.m.instance_types)\n}\n")
	writeFile(t, filepath.Join(dir, "main.tf"), "terraform {\n  required_providers {\n    stowage = {\n      source  = \"stowage-dev/stowage\"\n"+
		"      version = \"0.0.1\"\n    }\n  }\n}\nmodule \"pools\" {\n  source = \"./pools\"\n}\n")
	init := cli.MustRun(t, dir, "init", "-input=false")
	expectSays(t, init, "Installing stowage-dev/stowage v0.0.1", "Terraform has been successfully initialized")
	if v := cli.MustRun(t, dir, "version"); !strings.Contains(v, "provider registry.terraform.io/stowage-dev/stowage v0.0.1") {
		t.Errorf("terraform version does not show the mirror's provider:\n%s", v)
	}
	cli.MustRun(t, dir, "plan", "-input=false")

	// dev_overrides: the binary make provider wrote into bin/.
	bin, err := filepath.Abs("../../../bin")
	if err != nil {
		t.Fatal(err)
	}
	dev := *e.CLI
	dev.Env = append(slices.Clone(e.CLI.Env), "TF_CLI_CONFIG_FILE="+cliConfig(t, string(text), "dev-overrides", "/path/to/stowage/bin", bin))
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "main.tf"), "terraform {\n  required_providers {\n    stowage = { source = \"stowage-dev/stowage\" }\n  }\n}\n"+
		"data \"stowage_instance_types\" \"m\" {}\n")
	plan := dev.MustRun(t, root, "plan", "-input=false")
	expectSays(t, plan, "Provider development overrides are in effect")
	if out, err := dev.Run(root, "init", "-input=false"); err == nil {
		t.Errorf("terraform init with dev_overrides succeeded; the guide says it fails:\n%s", out)
	}
}

// cliConfig writes the guide's CLI configuration marked name, with its
// placeholder path replaced, and returns the file.
func cliConfig(t *testing.T, text, name, placeholder, path string) string {
	t.Helper()
	re := regexp.MustCompile("(?s)<!-- cli-config:" + regexp.QuoteMeta(name) + " -->\\s*```hcl\\n(.*?)```")
	m := re.FindStringSubmatch(text)
	if m == nil || !strings.Contains(m[1], placeholder) {
		t.Fatalf("the guide has no CLI configuration %q holding %s", name, placeholder)
	}
	file := filepath.Join(t.TempDir(), "terraformrc")
	writeFile(t, file, strings.ReplaceAll(m[1], placeholder, path))
	return file
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
