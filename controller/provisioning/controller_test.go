package provisioning_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/hashicorp/go-hclog"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/stowage-dev/stowage/controller/provisioning"
	"github.com/stowage-dev/stowage/controller/state"
	"github.com/stowage-dev/stowage/controller/state/informer"
	"github.com/stowage-dev/stowage/controller/state/statetest"
)

// startController runs the provisioning controller in a manager on the fake
// clock, with its own state fed by the manager's cache.
func (f *fixture) startController(t *testing.T) *provisioning.Batcher {
	mgr, err := manager.New(f.env.Config, manager.Options{
		Scheme: f.env.Scheme, Logger: logr.Discard(),
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatalf("building the manager: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cluster := state.NewCluster(f.env.Clock)
	if err := informer.Register(ctx, mgr.GetCache(), cluster); err != nil {
		t.Fatalf("registering the informers: %v", err)
	}
	batcher := provisioning.NewBatcher(f.env.Clock, provisioning.BatcherOptions{})
	p := provisioning.NewProvisioner(cluster, f.cloud, provisioning.ClientWriter{Client: mgr.GetClient()}, f.recorder, f.ids)
	if err := provisioning.NewController(mgr.GetClient(), cluster, batcher, p, hclog.NewNullLogger()).Register(mgr); err != nil {
		t.Fatalf("registering the controller: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("running the manager: %v", err)
		}
	})
	return batcher
}

// closeWindows advances the fake clock by a second whenever the batcher is
// waiting on it, until check passes.
func (f *fixture) closeWindows(t *testing.T, check func() error) {
	t.Helper()
	statetest.Eventually(t, 30*time.Second, func() error {
		if f.env.Clock.HasWaiters() {
			f.env.Clock.Step(time.Second)
		}
		return check()
	})
}

func (f *fixture) expectClaims(t *testing.T, want int) func() error {
	return func() error {
		if got := len(f.claims(t)); got != want {
			return fmt.Errorf("%d nodeclaims, want %d", got, want)
		}
		return nil
	}
}

func TestControllerProvisionsOnceTheWindowCloses(t *testing.T) {
	f := setup(t)
	batcher := f.startController(t)
	f.pending(t, f.env.Cluster, "web", "1")
	f.closeWindows(t, f.expectClaims(t, 1))

	// More windows, with nothing new pending, launch nothing more.
	for range 3 {
		batcher.Trigger()
		statetest.Eventually(t, 5*time.Second, func() error {
			if !f.env.Clock.HasWaiters() {
				return fmt.Errorf("no window opened")
			}
			return nil
		})
		f.closeWindows(t, func() error {
			if f.env.Clock.HasWaiters() {
				return fmt.Errorf("a window is still open")
			}
			return nil
		})
	}
	if got := len(f.claims(t)); got != 1 {
		t.Fatalf("%d nodeclaims after more windows, want 1", got)
	}
}
