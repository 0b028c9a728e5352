// Package nodeclaimtest is what the NodeClaim and termination controllers'
// tests stand on: one real control plane per test binary (internal/testenv)
// with Stowage's CRDs installed, one manager per test whose cache sees only
// that test's objects, a fake clock, a fake cloud that fails on demand,
// object builders and a poller.
package nodeclaimtest

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/stowage-dev/stowage/controller/apis/crds"
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/testenv"
)

// TestLabel carries each test's id; a test's manager caches only objects
// that have it, so that tests sharing the control plane never see each
// other's claims and Nodes.
const TestLabel = "test.stowage.dev/id"

// Scheme knows the built-in kinds and Stowage's.
var Scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

var (
	plane    *testenv.ControlPlane
	sequence atomic.Int64
)

// Main runs a test binary on one control plane started with o, with the
// CRDs installed; call it from TestMain. When the control plane cannot start
// (a component not built, for one) every test fails with the reason, which
// names `make tools` for a missing binary: nothing is skipped.
func Main(m *testing.M, o testenv.Options) {
	ctrllog.SetLogger(logr.Discard())
	os.Exit(run(m, o))
}

func run(m *testing.M, o testenv.Options) int {
	if err := start(o); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: starting the control plane:", err)
		return 1
	}
	defer func() {
		if err := plane.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the control plane:", err)
		}
	}()
	return m.Run()
}

func start(o testenv.Options) error {
	var err error
	if plane, err = testenv.StartControlPlane(context.Background(), o); err != nil {
		return err
	}
	defs, err := crds.CRDs()
	if err == nil {
		_, err = envtest.InstallCRDs(plane.Config, envtest.CRDInstallOptions{CRDs: defs})
	}
	if err != nil {
		_ = plane.Stop()
		return fmt.Errorf("installing the CRDs: %w", err)
	}
	return nil
}

// Env is one test's world: a manager (not yet started) whose cache sees
// only objects labelled with ID, a direct client for the test's own reads
// and writes, a fake clock and a fake cloud.
type Env struct {
	T   *testing.T
	Ctx context.Context
	// ID is the value of TestLabel on every object the test creates.
	ID string
	// Kube reads and writes the API server directly, with no cache lag.
	Kube  client.Client
	Mgr   manager.Manager
	Clock *clocktesting.FakeClock
	Cloud *Cloud

	startOnce sync.Once
}

// New returns a test's Env on the control plane Main started.
func New(t *testing.T) *Env {
	t.Helper()
	id := "t" + strconv.FormatInt(sequence.Add(1), 10)
	kube, err := client.New(plane.Config, client.Options{Scheme: Scheme})
	if err != nil {
		t.Fatalf("building the client: %v", err)
	}
	mgr, err := manager.New(plane.Config, manager.Options{
		Scheme:                 Scheme,
		Cache:                  cache.Options{DefaultLabelSelector: labels.SelectorFromSet(labels.Set{TestLabel: id})},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		Logger:                 logr.Discard(),
	})
	if err != nil {
		t.Fatalf("building the manager: %v", err)
	}
	// Real time at the start keeps API server timestamps (creation, deletion)
	// and the fake clock close until a test steps it.
	//nolint:forbidigo // seeds the fake clock; nothing reads the wall clock after
	return &Env{T: t, Ctx: t.Context(), ID: id, Kube: kube, Mgr: mgr,
		Clock: clocktesting.NewFakeClock(time.Now()), Cloud: NewCloud()}
}

// Start runs the manager until the test ends.
func (e *Env) Start() {
	e.T.Helper()
	e.startOnce.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- e.Mgr.Start(ctx) }()
		e.T.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				e.T.Errorf("manager: %v", err)
			}
		})
		if !e.Mgr.GetCache().WaitForCacheSync(e.Ctx) {
			e.T.Fatal("the manager's cache did not sync")
		}
	})
}

// Eventually polls check every 50 ms until it returns nil, failing the test
// with check's last error after timeout, or at once when a control-plane
// component has exited.
func (e *Env) Eventually(timeout time.Duration, check func() error) {
	e.T.Helper()
	var last error
	err := wait.PollUntilContextTimeout(e.Ctx, 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		if err := plane.Err(); err != nil {
			return false, err
		}
		last = check()
		return last == nil, nil
	})
	if err != nil {
		e.T.Fatalf("still failing after %s: %v (%v)", timeout, last, err)
	}
}

// Create labels obj with the test's id and creates it, failing the test on error.
func (e *Env) Create(obj client.Object) {
	e.T.Helper()
	l := obj.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	l[TestLabel] = e.ID
	obj.SetLabels(l)
	if err := e.Kube.Create(e.Ctx, obj); err != nil {
		e.T.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// Get reads obj's current state from the API server.
func (e *Env) Get(obj client.Object) error {
	return e.Kube.Get(e.Ctx, client.ObjectKeyFromObject(obj), obj)
}

// Gone returns nil once obj no longer exists.
func (e *Env) Gone(obj client.Object) error {
	err := e.Get(obj)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("%T %s still exists (deleting since %v, finalizers %v)", obj, obj.GetName(), obj.GetDeletionTimestamp(), obj.GetFinalizers())
}

// Update reads obj, applies mutate and writes it back, retrying on conflict.
func (e *Env) Update(obj client.Object, mutate func()) {
	e.T.Helper()
	e.write(obj, mutate, func() error { return e.Kube.Update(e.Ctx, obj) })
}

// UpdateStatus is Update through the status subresource.
func (e *Env) UpdateStatus(obj client.Object, mutate func()) {
	e.T.Helper()
	e.write(obj, mutate, func() error { return e.Kube.Status().Update(e.Ctx, obj) })
}

func (e *Env) write(obj client.Object, mutate func(), write func() error) {
	e.T.Helper()
	e.Eventually(10*time.Second, func() error {
		if err := e.Get(obj); err != nil {
			return err
		}
		mutate()
		return write()
	})
}

// Delete deletes obj, failing the test on any error but not-found.
func (e *Env) Delete(obj client.Object) {
	e.T.Helper()
	if err := e.Kube.Delete(e.Ctx, obj); client.IgnoreNotFound(err) != nil {
		e.T.Fatalf("deleting %T %s: %v", obj, obj.GetName(), err)
	}
}

// CounterValue returns a counter's current value.
func CounterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	m := &dto.Metric{}
	if err := c.Write(m); err != nil {
		t.Fatalf("reading a counter: %v", err)
	}
	return m.GetCounter().GetValue()
}

// ExpectCounter waits until the counter has risen by want from base: a
// controller counts right after the write a test observes.
func (e *Env) ExpectCounter(name string, c prometheus.Counter, base, want float64) {
	e.T.Helper()
	e.Eventually(5*time.Second, func() error {
		if got := CounterValue(e.T, c) - base; got != want {
			return fmt.Errorf("%s rose by %v, want %v", name, got, want)
		}
		return nil
	})
}
