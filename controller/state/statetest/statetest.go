// Package statetest runs a state.Cluster against a real kube-apiserver and
// etcd with Stowage's CRDs installed, for the tests of the packages that read
// the state. One control plane serves a whole test binary (see Run); each
// test gets its own namespace, cache and Cluster, and removes what it created.
package statetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/stowage-dev/stowage/controller/apis/crds"
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/state"
	"github.com/stowage-dev/stowage/controller/state/informer"
	"github.com/stowage-dev/stowage/internal/testenv"
)

// Epoch is where every Env's FakeClock starts.
var Epoch = time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)

// Env is one test's view of the shared control plane.
type Env struct {
	Config    *rest.Config
	Scheme    *k8sruntime.Scheme
	Client    client.Client
	Cluster   *state.Cluster
	Clock     *clocktesting.FakeClock
	Namespace string
}

var shared struct {
	once sync.Once
	cp   *testenv.ControlPlane
	err  error
}

// Run runs the tests and stops the control plane, if one was started. Call it
// from TestMain: os.Exit(statetest.Run(m)).
func Run(m *testing.M) int {
	code := m.Run()
	if shared.cp != nil {
		if err := shared.cp.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the control plane: %v\n", err)
		}
	}
	return code
}

// Scheme knows the core types and stowage.dev/v1alpha1.
func Scheme() *k8sruntime.Scheme {
	s := k8sruntime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(s), v1alpha1.AddToScheme(s)); err != nil {
		panic(err)
	}
	return s
}

// Start returns an Env whose Cluster is fed by informers and synced. It fails
// t when the control plane binaries are missing (see testenv.RequireAssets).
func Start(t *testing.T) *Env {
	t.Helper()
	cfg := controlPlane(t)
	e := &Env{Config: cfg, Scheme: Scheme(), Clock: clocktesting.NewFakeClock(Epoch)}
	var err error
	if e.Client, err = client.New(cfg, client.Options{Scheme: e.Scheme}); err != nil {
		t.Fatalf("building the client: %v", err)
	}
	e.Namespace = e.createNamespace(t)
	t.Cleanup(func() { e.clean(t) })
	e.Cluster = state.NewCluster(e.Clock)
	e.feed(t, e.Cluster)
	Eventually(t, 30*time.Second, func() error {
		if !e.Cluster.Synced(t.Context()) {
			return errors.New("the cluster state is not synced")
		}
		return nil
	})
	return e
}

// NewCluster returns another Cluster fed from the control plane, as a
// restarted controller would build; it is not yet synced.
func (e *Env) NewCluster(t *testing.T) *state.Cluster {
	c := state.NewCluster(e.Clock)
	e.feed(t, c)
	return c
}

// feed starts a cache for t's lifetime and registers c's informers on it.
func (e *Env) feed(t *testing.T, c *state.Cluster) {
	informers, err := cache.New(e.Config, cache.Options{Scheme: e.Scheme})
	if err != nil {
		t.Fatalf("building the cache: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := informer.Register(ctx, informers, c); err != nil {
		cancel()
		t.Fatalf("registering the informers: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = informers.Start(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

func controlPlane(t *testing.T) *rest.Config {
	bin := testenv.RequireAssets(t, testenv.Etcd, testenv.KubeAPIServer)
	shared.once.Do(func() {
		shared.cp, shared.err = testenv.StartControlPlane(context.Background(), testenv.Options{BinDir: bin})
		if shared.err == nil {
			shared.err = installCRDs(shared.cp.Config)
		}
	})
	if shared.err != nil {
		t.Fatalf("starting the control plane: %v", shared.err)
	}
	return rest.CopyConfig(shared.cp.Config)
}

// installCRDs installs Stowage's CRDs and waits until they are served.
func installCRDs(cfg *rest.Config) error {
	all, err := crds.CRDs()
	if err != nil {
		return err
	}
	_, err = envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: all})
	return err
}

func (e *Env) createNamespace(t *testing.T) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}
	if err := e.Client.Create(t.Context(), ns); err != nil {
		t.Fatalf("creating the namespace: %v", err)
	}
	return ns.Name
}

// clean deletes the cluster-scoped objects a test may have made, and the
// pods of its namespace, so that the next test starts from nothing.
func (e *Env) clean(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	now := client.GracePeriodSeconds(0)
	errs := []error{
		e.Client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(e.Namespace), now),
		e.Client.DeleteAllOf(ctx, &v1alpha1.NodeClaim{}),
		e.Client.DeleteAllOf(ctx, &v1alpha1.NodePool{}),
		e.Client.DeleteAllOf(ctx, &v1alpha1.NodeClass{}),
		e.Client.DeleteAllOf(ctx, &corev1.Node{}),
	}
	if err := errors.Join(errs...); err != nil {
		t.Errorf("cleaning up: %v", err)
	}
}

// Eventually calls check every 50 ms until it returns nil, and fails t with
// its last error once timeout has passed.
func Eventually(t testing.TB, timeout time.Duration, check func() error) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		err := check()
		if err == nil {
			return
		}
		select {
		case <-deadline.C:
			t.Fatalf("still failing after %s: %v", timeout, err)
		case <-tick.C:
		}
	}
}
