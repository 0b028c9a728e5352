package testenv

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// DefaultReadyTimeout bounds how long StartControlPlane waits for /readyz.
const DefaultReadyTimeout = 60 * time.Second

// ServiceClusterIPRange is the API server's service range.
const ServiceClusterIPRange = "10.0.0.0/24"

// KeepEnv names the environment variable that, when set, makes Stop keep the
// temporary folder (certificates, etcd data, logs) for inspection.
const KeepEnv = "STOWAGE_TESTENV_KEEP"

// Options configures StartControlPlane. The zero value starts etcd and
// kube-apiserver only.
type Options struct {
	// BinDir holds the binaries; Assets() when empty.
	BinDir string
	// Scheduler, ControllerManager and Kwok start those components too.
	Scheduler, ControllerManager, Kwok bool
	// ExtraFlags are appended, per component name (KubeAPIServer, Etcd, ...),
	// to the flags testenv passes; a later flag wins.
	ExtraFlags map[string][]string
	// ReadyTimeout bounds the wait for /readyz; DefaultReadyTimeout when zero.
	ReadyTimeout time.Duration
}

// BedOptions starts every component of the whole-system bed.
func BedOptions() Options {
	return Options{Scheduler: true, ControllerManager: true, Kwok: true}
}

// components lists the binaries o needs.
func (o Options) components() []string {
	names := []string{Etcd, KubeAPIServer}
	if o.Scheduler {
		names = append(names, KubeScheduler)
	}
	if o.ControllerManager {
		names = append(names, KubeControllerManager)
	}
	if o.Kwok {
		names = append(names, Kwok)
	}
	return names
}

// ControlPlane is a running etcd and kube-apiserver, with the optional
// components started on it. Stop ends them all and removes Dir.
type ControlPlane struct {
	// Dir holds certificates, etcd's data, the kubeconfig and one log per process.
	Dir string
	// Config reaches the API server as system:masters; copy it (rest.CopyConfig)
	// before changing it.
	Config *rest.Config
	// KubeconfigPath is a kubeconfig file with the same credentials.
	KubeconfigPath string
	// APIServerURL and EtcdURL are the servers' addresses on 127.0.0.1.
	APIServerURL, EtcdURL string

	binDir string
	pki    *pki
	procs  []*process
}

// StartControlPlane starts etcd and kube-apiserver on free 127.0.0.1 ports,
// waits until /readyz answers ok, then starts the components o asks for. On
// error everything started so far is stopped.
func StartControlPlane(ctx context.Context, o Options) (*ControlPlane, error) {
	binDir := o.BinDir
	if binDir == "" {
		var err error
		if binDir, err = Assets(o.components()...); err != nil {
			return nil, err
		}
	}
	var err error
	for range startAttempts {
		var cp *ControlPlane
		if cp, err = startOnce(ctx, binDir, o); err == nil {
			return cp, nil
		}
		if !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	return nil, err
}

// startAttempts bounds retries when a free port was taken before a server
// bound it.
const startAttempts = 3

func startOnce(ctx context.Context, binDir string, o Options) (*ControlPlane, error) {
	dir, err := os.MkdirTemp("", "stowage-testenv-")
	if err != nil {
		return nil, fmt.Errorf("creating the control plane folder: %w", err)
	}
	cp := &ControlPlane{Dir: dir, binDir: binDir}
	if err := cp.start(ctx, o); err != nil {
		return nil, errors.Join(err, cp.Stop())
	}
	return cp, nil
}

func (cp *ControlPlane) start(ctx context.Context, o Options) error {
	var err error
	if cp.pki, err = newPKI(cp.Dir); err != nil {
		return err
	}
	if err := cp.startEtcd(o.ExtraFlags[Etcd]); err != nil {
		return err
	}
	if err := cp.startAPIServer(o.ExtraFlags[KubeAPIServer]); err != nil {
		return err
	}
	timeout := o.ReadyTimeout
	if timeout == 0 {
		timeout = DefaultReadyTimeout
	}
	if err := cp.waitReady(ctx, timeout); err != nil {
		return err
	}
	return cp.startOptional(o)
}

func (cp *ControlPlane) startOptional(o Options) error {
	if o.ControllerManager {
		if err := cp.StartControllerManager(o.ExtraFlags[KubeControllerManager]...); err != nil {
			return err
		}
	}
	if o.Scheduler {
		if err := cp.StartScheduler(o.ExtraFlags[KubeScheduler]...); err != nil {
			return err
		}
	}
	if o.Kwok {
		return cp.StartKwok(o.ExtraFlags[Kwok]...)
	}
	return nil
}

func (cp *ControlPlane) startEtcd(extra []string) error {
	clientPort, err := freePort()
	if err != nil {
		return err
	}
	peerPort, err := freePort()
	if err != nil {
		return err
	}
	cp.EtcdURL = "http://127.0.0.1:" + strconv.Itoa(clientPort)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	args := flags(
		"name", "testenv",
		"data-dir", filepath.Join(cp.Dir, "etcd"),
		"listen-client-urls", cp.EtcdURL,
		"advertise-client-urls", cp.EtcdURL,
		"listen-peer-urls", peerURL,
		"initial-advertise-peer-urls", peerURL,
		"initial-cluster", "testenv="+peerURL,
		"unsafe-no-fsync", "true",
		"log-level", "warn",
	)
	return cp.run(Etcd, append(args, extra...), nil)
}

func (cp *ControlPlane) startAPIServer(extra []string) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	cp.APIServerURL = "https://127.0.0.1:" + strconv.Itoa(port)
	args := append(flags(
		"etcd-servers", cp.EtcdURL,
		"bind-address", "127.0.0.1",
		"advertise-address", "127.0.0.1",
		"secure-port", strconv.Itoa(port),
		"endpoint-reconciler-type", "none",
		"tls-cert-file", cp.pki.ServingCertFile,
		"tls-private-key-file", cp.pki.ServingKeyFile,
		"client-ca-file", cp.pki.CAFile,
		"authorization-mode", "RBAC",
		"disable-admission-plugins", "ServiceAccount",
		"service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"service-account-key-file", cp.pki.SAPublicKeyFile,
		"service-account-signing-key-file", cp.pki.SAPrivateKeyFile,
		"service-cluster-ip-range", ServiceClusterIPRange,
		"allow-privileged", "true",
		"profiling", "false",
	), extra...)
	if err := cp.run(KubeAPIServer, args, nil); err != nil {
		return err
	}
	cp.Config = cp.restConfig()
	cp.KubeconfigPath = filepath.Join(cp.Dir, "kubeconfig")
	return writeKubeconfig(cp.KubeconfigPath, cp.Config)
}

// restConfig authenticates with the admin client certificate (system:masters).
func (cp *ControlPlane) restConfig() *rest.Config {
	return &rest.Config{
		Host: cp.APIServerURL,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   cp.pki.CAPEM,
			CertData: cp.pki.AdminCertPEM,
			KeyData:  cp.pki.AdminKeyPEM,
		},
		QPS:   200,
		Burst: 400,
	}
}

// waitReady polls /readyz until it answers 200, a process exits, or the timeout passes.
func (cp *ControlPlane) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client, err := rest.HTTPClientFor(cp.Config)
	if err != nil {
		return fmt.Errorf("building the readiness client: %w", err)
	}
	ticker := time.NewTicker(100 * time.Millisecond)
	defer ticker.Stop()
	var last error
	for {
		if err := cp.Err(); err != nil {
			return err
		}
		if last = readyz(ctx, client, cp.APIServerURL); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for kube-apiserver /readyz (last: %v): %w; last lines of its log:\n%s",
				last, ctx.Err(), cp.proc(KubeAPIServer).tail(logTailLines))
		case <-ticker.C:
		}
	}
}

func readyz(ctx context.Context, client *http.Client, base string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/readyz", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/readyz answered %s", resp.Status)
	}
	return nil
}

// run starts one component with its log in Dir.
func (cp *ControlPlane) run(name string, args, env []string) error {
	p, err := startProcess(name, filepath.Join(cp.binDir, name), cp.Dir, args, env)
	if err != nil {
		return err
	}
	cp.procs = append(cp.procs, p)
	return nil
}

func (cp *ControlPlane) proc(name string) *process {
	for _, p := range cp.procs {
		if p.name == name {
			return p
		}
	}
	return nil
}

// Err returns an error, with the tail of its log, for the first component that
// has exited; nil while all run. Tests can call it while polling to fail fast.
func (cp *ControlPlane) Err() error {
	for _, p := range cp.procs {
		if p.exited() {
			return p.exitError()
		}
	}
	return nil
}

// LogTails returns the last lines of every component's log, for a failing test.
func (cp *ControlPlane) LogTails() string {
	var out string
	for _, p := range cp.procs {
		out += fmt.Sprintf("==== %s (%s) ====\n%s\n", p.name, p.logPath, p.tail(logTailLines))
	}
	return out
}

// Stop ends every component (the last started first) and removes Dir unless
// STOWAGE_TESTENV_KEEP is set. It may be called more than once.
func (cp *ControlPlane) Stop() error {
	var errs []error
	for i := len(cp.procs) - 1; i >= 0; i-- {
		errs = append(errs, cp.procs[i].stop())
	}
	cp.procs = nil
	if cp.Dir != "" && os.Getenv(KeepEnv) == "" {
		if err := os.RemoveAll(cp.Dir); err != nil {
			errs = append(errs, fmt.Errorf("removing %s: %w", cp.Dir, err))
		}
	}
	return errors.Join(errs...)
}
