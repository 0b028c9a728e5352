package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/stowage-dev/stowage/controller/apis/crds"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/testenv"
)

func env(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

func TestRunRefusesBadSettingsNamingTheFlag(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want []string
	}{
		{"nothing set", nil, nil, []string{"--cluster-name: required"}},
		{"several bad flags", []string{"--cluster-name=c", "--region=us-east-1", "--log-level=loud", "--batch-idle-duration=0s"}, nil,
			[]string{"--log-level: \"loud\" is not a level", "--batch-idle-duration: must be positive"}},
		{"a bad environment variable", []string{"--cluster-name=c", "--region=us-east-1"}, map[string]string{"LEADER_ELECT": "maybe"},
			[]string{"environment variable LEADER_ELECT (flag --leader-elect)"}},
		{"no region", []string{"--cluster-name=c"}, nil, []string{"--region: required: set it (or AWS_REGION)"}},
		{"an unknown flag", []string{"--cluster-name=c", "--nodes=3"}, nil, []string{"flag provided but not defined: -nodes"}},
		{"an argument", []string{"--cluster-name=c", "now"}, nil, []string{`unexpected argument "now"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			code := runControllerUntil(t.Context(), tc.args, env(tc.env), &stderr)
			if code != exitBadArgs {
				t.Errorf("exit %d, want %d", code, exitBadArgs)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr %q does not say %q", stderr.String(), w)
				}
			}
		})
	}
}

func TestRunHelpListsTheFlagsAndTheirVariables(t *testing.T) {
	var stderr bytes.Buffer
	if code := runControllerUntil(t.Context(), []string{"-h"}, env(nil), &stderr); code != exitOK {
		t.Errorf("exit %d, want 0", code)
	}
	for _, w := range []string{"-cluster-name", "env CLUSTER_NAME", "-batch-idle-duration", "env BATCH_IDLE_DURATION"} {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("help does not mention %q:\n%s", w, stderr.String())
		}
	}
}

func TestMainDispatchesRun(t *testing.T) {
	code, _, stderr := stowage(t, "run", "--log-format=yaml")
	if code != exitBadArgs || !strings.Contains(stderr, "--log-format") {
		t.Errorf("stowage run --log-format=yaml: exit %d, stderr %q; want 2 naming --log-format", code, stderr)
	}
	_, stdout, _ := stowage(t, "help")
	if !strings.Contains(stdout, "run ") {
		t.Errorf("usage does not list run:\n%s", stdout)
	}
}

// TestRunServesAndLeadsUntilCancelled runs `stowage run` in process as a
// user would start it, from KUBECONFIG and AWS_ENDPOINT_URL, against a real
// API server and the AWS emulator: without --cluster-cidr it reads the
// service CIDR from eks:DescribeCluster (and refuses to start, naming the
// flag, for a cluster EKS does not know), elects itself on the Lease, serves
// readiness and the cloud provider's metrics, and exits 0 when stopped.
func TestRunServesAndLeadsUntilCancelled(t *testing.T) {
	cp := testenv.Start(t, testenv.Options{})
	defs, err := crds.CRDs()
	if err == nil {
		_, err = envtest.InstallCRDs(cp.Config, envtest.CRDInstallOptions{CRDs: defs})
	}
	if err != nil {
		t.Fatalf("installing the CRDs: %v", err)
	}
	emulator := awsemu.New(awsemu.DefaultConfig())
	emulator.AddEKSCluster(awsemu.EKSCluster{Name: "smoke", ServiceIPv4CIDR: "10.100.0.0/16", IPFamily: "ipv4"})
	emu := httptest.NewServer(emulator.Handler())
	t.Cleanup(emu.Close)
	t.Setenv("KUBECONFIG", cp.KubeconfigPath)
	t.Setenv("HOME", t.TempDir()) // no ~/.aws or ~/.kube of the machine's
	for k, v := range map[string]string{"AWS_ENDPOINT_URL": emu.URL, "AWS_ACCESS_KEY_ID": "AKIDEMULATOR",
		"AWS_SECRET_ACCESS_KEY": "secret", "AWS_EC2_METADATA_DISABLED": "true"} {
		t.Setenv(k, v)
	}
	refusal := &lockedBuffer{}
	if code := runControllerUntil(t.Context(), []string{"--cluster-name=unknown", "--region=us-east-1"}, env(nil), refusal); code != exitFailed ||
		!strings.Contains(refusal.String(), "--cluster-cidr: not set, and describing EKS cluster unknown") {
		t.Errorf("without --cluster-cidr and a cluster EKS knows: exit %d, want %d naming --cluster-cidr; stderr:\n%s", code, exitFailed, refusal)
	}
	metrics, health := freeAddr(t), freeAddr(t)
	args := []string{"--cluster-name=smoke", "--region=us-east-1", "--metrics-bind-address=" + metrics,
		"--health-probe-bind-address=" + health, "--leader-election-namespace=default", "--leader-election-name=smoke"}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stderr := &lockedBuffer{}
	done := make(chan int, 1)
	go func() { done <- runControllerUntil(ctx, args, env(nil), stderr) }()

	kube, err := client.New(cp.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	poll(t, done, stderr, func() error { return get("http://" + health + "/readyz") })
	poll(t, done, stderr, func() error {
		var l coordinationv1.Lease
		if err := kube.Get(ctx, client.ObjectKey{Namespace: "default", Name: "smoke"}, &l); err != nil {
			return err
		}
		if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
			return fmt.Errorf("the lease has no holder")
		}
		return nil
	})
	poll(t, done, stderr, func() error {
		return bodyContains("http://"+metrics+"/metrics", `stowage_cloudprovider_errors_total{error="insufficient_capacity",method="Create",provider="aws"} 0`)
	})

	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("exit %d after cancel, want 0; stderr:\n%s", code, stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("still running 30s after cancel; stderr:\n%s", stderr)
	}
	for _, w := range []string{`"@message":"starting"`, `"kubernetes_version":"1.`, `"cluster_cidr":"10.100.0.0/16"`, `"@message":"controller stopped"`} {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("logs lack %s:\n%s", w, stderr)
		}
	}
}

// freeAddr returns a 127.0.0.1 address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// poll checks every 100 ms for 60 s, failing early if the command exits.
func poll(t *testing.T, done chan int, stderr fmt.Stringer, check func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		select {
		case code := <-done:
			return false, fmt.Errorf("stowage run exited %d", code)
		default:
		}
		last = check()
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("%v (last: %v); stderr:\n%s", err, last, stderr)
	}
}

func get(url string) error {
	_, err := body(url)
	return err
}

func bodyContains(url, want string) error {
	b, err := body(url)
	if err != nil {
		return err
	}
	if !strings.Contains(b, want) {
		return fmt.Errorf("%s lacks %s", url, want)
	}
	return nil
}

func body(url string) (string, error) {
	resp, err := http.Get(url) //nolint:gosec,noctx // a loopback test server
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s answered %s: %s", url, resp.Status, b)
	}
	return string(b), err
}

// lockedBuffer is a bytes.Buffer the command writes while the test reads.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
