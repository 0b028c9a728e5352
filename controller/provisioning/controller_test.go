package provisioning_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/hashicorp/go-hclog"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// nominations counts the Nominated events about pod.
func (f *fixture) nominations(pod *corev1.Pod) int {
	n := 0
	for _, e := range f.recorder.about(pod) {
		if strings.HasPrefix(e, provisioning.ReasonNominated+":") {
			n++
		}
	}
	return n
}

func (f *fixture) expectNominations(pod *corev1.Pod, want int) func() error {
	return func() error {
		if got := f.nominations(pod); got < want {
			return fmt.Errorf("pod %s was nominated %d times, want %d", pod.Name, got, want)
		}
		return nil
	}
}

// TestALapsedNominationPlansThePodAgain: kube-scheduler does not bind the
// pod where the plan said (here nothing binds it), and does not touch it
// again; once the nomination lapses the controller plans it in a new batch.
func TestALapsedNominationPlansThePodAgain(t *testing.T) {
	f := setup(t)
	node := statetest.Node("ip-10-0-0-9", "", "8", "32Gi")
	node.Status.Conditions[0].LastTransitionTime = metav1.NewTime(statetest.Epoch)
	f.env.Create(t, node)
	// The API server registers a node with the not-ready taint; the node
	// lifecycle controller, not running here, lifts it once it is Ready.
	node.Spec.Taints = nil
	if err := f.env.Client.Update(t.Context(), node); err != nil {
		t.Fatal(err)
	}
	f.startController(t)
	pod := f.pending(t, f.env.Cluster, "web", "1")
	f.closeWindows(t, f.expectNominations(pod, 1))
	planned := f.env.Clock.Now()
	f.closeWindows(t, f.expectNominations(pod, 2))
	if waited := f.env.Clock.Since(planned); waited < state.NominationGrace {
		t.Errorf("planned again after %s, before the nomination's grace of %s", waited, state.NominationGrace)
	}
	if got := len(f.claims(t)); got != 0 {
		t.Errorf("%d nodeclaims; the node has room, want none", got)
	}
}

// TestADeletedNodeClaimPlansItsPodsAgain: a claim deleted before its node
// came (a shortage, a timeout) opens a batch for the pods nominated to it.
func TestADeletedNodeClaimPlansItsPodsAgain(t *testing.T) {
	f := setup(t)
	f.startController(t)
	pod := f.pending(t, f.env.Cluster, "web", "1")
	f.closeWindows(t, f.expectClaims(t, 1))
	first := f.claims(t)[0]
	if err := f.env.Client.Delete(t.Context(), &first); err != nil {
		t.Fatal(err)
	}
	f.closeWindows(t, func() error {
		claims := f.claims(t)
		if len(claims) != 1 || claims[0].Name == first.Name {
			return fmt.Errorf("nodeclaims %v, want one other than %s", len(claims), first.Name)
		}
		return f.expectNominations(pod, 2)()
	})
}
