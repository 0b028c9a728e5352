package testbed

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"context"

	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/testenv"
)

// RIERuntime runs the emulator's functions under the AWS Lambda runtime
// interface emulator: each execution environment unpacks the function's
// zip into a folder of Dir and runs its bootstrap under aws-lambda-rie with
// the function's environment, plus AWS_ENDPOINT_URL pointing at the
// emulator (the network that leads the function to AWS).
type RIERuntime struct {
	// Dir holds the execution environments' folders.
	Dir string
	// EndpointURL is the emulator's URL.
	EndpointURL string

	mu   sync.Mutex
	envs []*testenv.RIE
}

var _ awsemu.FunctionRuntime = (*RIERuntime)(nil)

// arches maps Lambda's architectures to Go's.
var arches = map[string]string{"x86_64": "amd64", "arm64": "arm64"}

// Start unpacks the code and starts RIE on it.
func (r *RIERuntime) Start(code awsemu.FunctionCode) (awsemu.FunctionInstance, error) {
	if arches[code.Architecture] != runtime.GOARCH {
		return nil, fmt.Errorf("function %s is built for %s; this machine runs %s", code.Name, code.Architecture, runtime.GOARCH)
	}
	dir, err := os.MkdirTemp(r.Dir, code.Name+"-")
	if err != nil {
		return nil, err
	}
	if err := unzip(code.Zip, dir); err != nil {
		return nil, fmt.Errorf("unpacking function %s: %w", code.Name, err)
	}
	env := append(append([]string(nil), code.Environment...), "AWS_ENDPOINT_URL="+r.EndpointURL,
		fmt.Sprintf("AWS_LAMBDA_FUNCTION_TIMEOUT=%d", int(code.Timeout.Seconds())))
	rie, err := testenv.StartRIE(dir, env)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.envs = append(r.envs, rie)
	r.mu.Unlock()
	return rieInstance{rie}, nil
}

// Logs returns what every execution environment has logged (RIE's lines
// and the functions' output), oldest environment first.
func (r *RIERuntime) Logs() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, e := range r.envs {
		b.WriteString(e.Logs())
	}
	return b.String()
}

// PIDs are the running environments' aws-lambda-rie processes.
func (r *RIERuntime) PIDs() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]int, 0, len(r.envs))
	for _, e := range r.envs {
		out = append(out, e.PID())
	}
	return out
}

type rieInstance struct{ rie *testenv.RIE }

func (i rieInstance) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	out, err := i.rie.Invoke(ctx, payload)
	var fe *testenv.FunctionError
	if errors.As(err, &fe) {
		return nil, &awsemu.FunctionError{Type: fe.Type, Message: fe.Message}
	}
	return out, err
}

func (i rieInstance) Close() error { return i.rie.Close() }

// unzip writes the zip's files into dir, keeping their modes.
func unzip(data []byte, dir string) error {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return err
	}
	for _, f := range zr.File {
		path := filepath.Join(dir, f.Name)
		if !strings.HasPrefix(path, filepath.Clean(dir)+string(filepath.Separator)) {
			return fmt.Errorf("zip entry %q leaves the folder", f.Name)
		}
		if f.FileInfo().IsDir() {
			continue
		}
		if err := writeEntry(f, path); err != nil {
			return err
		}
	}
	return nil
}

func writeEntry(f *zip.File, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	out, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, f.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, rc); err != nil { //nolint:gosec // our own build's zip
		_ = out.Close()
		return err
	}
	return out.Close()
}

// LambdaTarget is the make target that builds the interruption Lambda's zips.
const LambdaTarget = "make lambda"

// BuildLambdaZip runs `make lambda` for this machine's architecture into
// dir and returns the zip's path: the bed deploys the artefact users get.
func BuildLambdaZip(dir string) (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.Command("make", "-s", "lambda", "LAMBDA_DIR="+dir, "LAMBDA_ARCHS="+runtime.GOARCH)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s: %w\n%s", LambdaTarget, err, out)
	}
	return filepath.Join(dir, "stowage-interruption-lambda-"+runtime.GOARCH+".zip"), nil
}

// repoRoot is the folder of the module's go.mod, above the working folder.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.Contains(data, []byte("module github.com/stowage-dev/stowage\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("the stowage module's go.mod is not above the working folder")
		}
		dir = parent
	}
}
