package tfbed

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/stowage-dev/stowage/internal/testbed"
)

// controllerBuild is the stowage binary, built once per Env.
type controllerBuild struct {
	once   sync.Once
	binary string
	err    error
}

// RunController runs the controller built from this tree as the bed's
// process, exactly as the Deployment Terraform applied in namespace
// describes it (its arguments, environment, service account and IRSA role):
// what it may do is what the RBAC and the IAM policy Terraform made allow.
func (e *Env) RunController(ctx context.Context, namespace string) (*testbed.ControllerProcess, error) {
	binary, err := e.Stowage()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(e.Dir, "controller-")
	if err != nil {
		return nil, err
	}
	return e.Bed.RunController(ctx, testbed.ProcessOptions{Binary: binary, Dir: dir,
		AWSEndpoint: e.TLS.URL, AWSCABundle: e.CABundle, Namespace: namespace})
}

// RunContainer runs the image the Deployment Terraform applied in namespace
// names, pulled by its digest, under runc, as the kubelet would run the
// pod's container (testbed.ProcessOptions.Container): what it may do is
// what the RBAC and the IAM policy Terraform made allow.
func (e *Env) RunContainer(ctx context.Context, namespace string) (*testbed.ControllerProcess, error) {
	dir, err := os.MkdirTemp(e.Dir, "container-")
	if err != nil {
		return nil, err
	}
	return e.Bed.RunController(ctx, testbed.ProcessOptions{Container: true, Dir: dir,
		AWSEndpoint: e.TLS.URL, AWSCABundle: e.CABundle, Namespace: namespace})
}

// Stowage is the stowage binary built from this tree (once per Env).
func (e *Env) Stowage() (string, error) {
	e.controller.once.Do(func() {
		e.controller.binary = filepath.Join(e.Dir, "stowage")
		build := exec.Command("go", "build", "-o", e.controller.binary, "github.com/stowage-dev/stowage/controller/cmd/stowage")
		if out, err := build.CombinedOutput(); err != nil {
			e.controller.err = fmt.Errorf("building stowage: %w\n%s", err, out)
		}
	})
	return e.controller.binary, e.controller.err
}

// LogTail is the last n lines of a controller's log, for a failing test.
func LogTail(p *testbed.ControllerProcess, n int) string {
	b, _ := os.ReadFile(p.LogPath)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
