package testenv

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// registryReadyTimeout bounds the wait for the registry to answer /v2/.
const registryReadyTimeout = 30 * time.Second

// ImageRegistry is an OCI distribution registry
// (github.com/distribution/distribution/v3's cmd/registry) on loopback,
// storing in its folder: where tests push an image and a runtime pulls it.
// Clients reach it over plain HTTP, as go-containerregistry does for a
// registry on 127.0.0.1.
type ImageRegistry struct {
	// Host is 127.0.0.1:port, the registry part of an image reference.
	Host string
	proc *process
}

// StartRegistry starts the registry in dir and waits until it answers.
func StartRegistry(dir string) (*ImageRegistry, error) {
	bin, err := Assets(Registry)
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	host := "127.0.0.1:" + strconv.Itoa(port)
	config := fmt.Sprintf("version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: %s\n"+
		"http:\n  addr: %s\n  secret: bed-only\n", filepath.Join(dir, "data"), host)
	cfgPath := filepath.Join(dir, "registry.yml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(bin, Registry), "serve", cfgPath)
	// No telemetry leaves the machine.
	cmd.Env = append(os.Environ(), "OTEL_TRACES_EXPORTER=none", "OTEL_METRICS_EXPORTER=none", "OTEL_LOGS_EXPORTER=none")
	proc, err := runProcess(Registry, dir, cmd)
	if err != nil {
		return nil, err
	}
	r := &ImageRegistry{Host: host, proc: proc}
	if err := r.waitReady(); err != nil {
		return nil, errors.Join(err, proc.stop())
	}
	return r, nil
}

func (r *ImageRegistry) waitReady() error {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{Proxy: nil}}
	deadline := time.Now().Add(registryReadyTimeout)
	for {
		if r.proc.exited() {
			return r.proc.exitError()
		}
		resp, err := client.Get("http://" + r.Host + "/v2/")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the registry did not answer /v2/ within %v (%v); last lines of its log:\n%s",
				registryReadyTimeout, err, r.proc.tail(logTailLines))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Stop ends the registry.
func (r *ImageRegistry) Stop() error { return r.proc.stop() }
