package docsrun_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stowage-dev/stowage/internal/docsrun"
	"github.com/stowage-dev/stowage/internal/testenv"
	"github.com/stowage-dev/stowage/internal/tfbed"
)

// TestTheInstallGuideRunsOnABareBed runs the install guide's blocks in
// order, each under bash -euo pipefail, on a bed with nothing of Stowage
// installed: Terraform (the provider built from this tree, in a filesystem
// mirror), helm and kubectl on PATH, the guide's variables set to the bed's
// cluster and release (the module and the chart from this tree), and a
// stand-in for the kubelet that runs the controller as whatever Deployment
// the blocks installed describes. The guide installs with the module,
// kubectl and the chart, upgrades and uninstalls; nothing may be left
// running in the emulator.
func TestTheInstallGuideRunsOnABareBed(t *testing.T) {
	f, err := os.Open(filepath.Join(root, installGuide))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := docsrun.Blocks(installGuide, f)
	_ = f.Close()
	if err != nil || len(blocks) < 8 {
		t.Fatalf("%d runnable blocks in %s (%v)", len(blocks), installGuide, err)
	}
	bin := testenv.RequireAssets(t, testenv.Kubectl, testenv.Helm, testenv.Terraform)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e, err := tfbed.Start(ctx, t.TempDir(), tfbed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Stop(); err != nil {
			t.Errorf("stopping the bed: %v", err)
		}
	})
	kubelet := e.StartKubelet()
	t.Cleanup(kubelet.Stop)
	work := t.TempDir()
	env := guideEnv(t, e, bin, work)
	for _, b := range blocks {
		ok := t.Run(b.File+":"+strconv.Itoa(b.Line), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", b.Script)
			cmd.Dir, cmd.Env = work, env
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s:%d: %v\n--- block\n%s--- output\n%s\n%s", b.File, b.Line, err, b.Script, out, kubelet.Report(30))
			}
			t.Logf("%s:%d:\n%s", b.File, b.Line, out)
		})
		if !ok {
			return // the blocks build on each other
		}
	}
	// Only what the guide's last (AWS CLI) block deletes by hand may be left.
	left, err := e.Leftovers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if unexpected := slices.DeleteFunc(left, func(l string) bool {
		return strings.HasPrefix(l, "launch template ") || strings.HasPrefix(l, "instance profile ")
	}); len(unexpected) > 0 {
		t.Errorf("the guide's uninstall left %v", unexpected)
	}
}

// guideEnv is the environment the guide's first block tells a reader to
// set, for the bed, with the tools on PATH and Terraform's settings.
func guideEnv(t *testing.T, e *tfbed.Env, bin, work string) []string {
	t.Helper()
	repo, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(repo, "modules"), filepath.Join(work, "modules")); err != nil {
		t.Fatal(err)
	}
	v := e.Values()
	return append(append([]string(nil), e.CLI.Env...),
		"TF_CLI_ARGS=-no-color", "PATH="+bin+":"+os.Getenv("PATH"), "KUBECONFIG="+e.Bed.ControlPlane.KubeconfigPath,
		"CLUSTER_NAME="+v["cluster_name"], "AWS_REGION=us-east-1", "CLUSTER_ENDPOINT="+v["cluster_endpoint"],
		"CLUSTER_CA="+v["cluster_ca"], "OIDC_PROVIDER_ARN="+v["oidc_provider_arn"], "LAMBDA_ARCHITECTURE="+v["lambda_architecture"],
		"STOWAGE_VERSION=0.0.0-dev", "STOWAGE_MODULE_SOURCE=../modules/stowage", "STOWAGE_CHART="+filepath.Join(repo, "charts", "stowage"))
}
