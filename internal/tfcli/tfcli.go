// Package tfcli runs the real terraform CLI as a user does, with the Stowage
// provider built from this tree and installed through a filesystem mirror, so
// that tests of modules, examples and generated configurations need no
// registry and no network.
package tfcli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/stowage-dev/stowage/internal/testenv"
)

// ProviderVersion is the version the mirror serves the provider under.
const ProviderVersion = "0.0.1"

// CLI is the terraform binary with a CLI configuration that installs
// stowage-dev/stowage from the mirror and from nowhere else.
type CLI struct {
	// Bin is the terraform binary.
	Bin string
	// Dir holds the mirror and the CLI configuration.
	Dir string
	// Env is the environment every command runs with.
	Env []string
	// Timeout bounds one command; 3 minutes when zero.
	Timeout time.Duration
}

// New builds the provider into a mirror under dir and returns a CLI that
// reaches the cluster of kubeconfig (KUBE_CONFIG_PATH). A missing terraform
// binary is an error naming `make tools`.
func New(dir, kubeconfig string) (*CLI, error) {
	bin, err := testenv.Assets(testenv.Terraform)
	if err != nil {
		return nil, err
	}
	c := &CLI{Bin: filepath.Join(bin, testenv.Terraform), Dir: dir}
	mirror := filepath.Join(dir, "mirror")
	if err := buildProvider(mirror); err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "terraformrc")
	text := fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path    = %q\n    include = [\"stowage-dev/stowage\"]\n  }\n}\n", mirror)
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		return nil, err
	}
	c.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1", "TF_CLI_CONFIG_FILE="+cfg,
		"KUBE_CONFIG_PATH="+kubeconfig, "TF_PLUGIN_CACHE_DIR=")
	return c, nil
}

// buildProvider builds the provider into the mirror's layout.
func buildProvider(mirror string) error {
	dir := filepath.Join(mirror, "registry.terraform.io", "stowage-dev", "stowage", ProviderVersion, runtime.GOOS+"_"+runtime.GOARCH)
	out := filepath.Join(dir, "terraform-provider-stowage_v"+ProviderVersion)
	build := exec.Command("go", "build", "-ldflags", "-s -w", "-o", out, "github.com/stowage-dev/stowage/provider")
	if b, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building the provider: %w\n%s", err, b)
	}
	return nil
}

// Run runs terraform in dir with args (-no-color added after the
// subcommand, except for `providers schema -json`, which has no colours) and
// returns its combined output.
func (c *CLI) Run(dir string, args ...string) (string, error) {
	timeout := c.Timeout
	if timeout == 0 {
		timeout = 3 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	full := args
	if args[0] != "providers" {
		full = append([]string{args[0], "-no-color"}, args[1:]...)
	}
	cmd := exec.CommandContext(ctx, c.Bin, full...)
	cmd.Dir, cmd.Env = dir, c.Env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("terraform %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}

// OneLine undoes terraform's wrapping of diagnostics, for matching.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
