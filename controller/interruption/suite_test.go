package interruption_test

import (
	"context"
	"fmt"
	"github.com/stowage-dev/stowage/controller/events/eventstest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/interruption"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
	"github.com/stowage-dev/stowage/controller/nodeclaim/nodeclaimtest"
	"github.com/stowage-dev/stowage/internal/testenv"
)

// settle bounds every wait on the controller; it reacts in well under a second.
const settle = 20 * time.Second

// holdFinalizer keeps a deleted claim in place, as the termination finalizer
// would while its Node drains, so that the tests see it being deleted and the
// controller sees it again on later marks.
const holdFinalizer = "test.stowage.dev/hold"

func TestMain(m *testing.M) { nodeclaimtest.Main(m, testenv.Options{}) }

// world is a test's Env running the interruption controller, with the fakes
// it reports to and a count of the NodeClaim deletes it makes.
type world struct {
	*nodeclaimtest.Env
	ctrl      *interruption.Controller
	kube      *countingClient
	offerings *offerings
	events    *recorder
}

func start(t *testing.T, opts interruption.Options) *world {
	t.Helper()
	e := nodeclaimtest.New(t)
	w := &world{Env: e, kube: &countingClient{Client: e.Mgr.GetClient()}, offerings: &offerings{}, events: &eventstest.Recorder{}}
	opts.Recorder = w.events
	w.ctrl = interruption.New(e.Clock, w.kube, w.offerings, opts)
	if err := w.ctrl.Register(e.Mgr); err != nil {
		t.Fatalf("registering the controller: %v", err)
	}
	e.Start()
	return w
}

// managed creates a NodeClaim and its registered spot Node (m6i.large in
// us-east-1a), and waits until the controller's cache pairs them.
func (w *world) managed(name string) (*v1alpha1.NodeClaim, *corev1.Node) {
	w.T.Helper()
	providerID := "aws:///us-east-1a/i-" + w.ID + name
	claim := w.NodeClaim(name, nil)
	claim.Finalizers = []string{holdFinalizer}
	w.Create(claim)
	w.UpdateStatus(claim, func() { claim.Status.ProviderID = providerID })
	node := w.node(name, providerID)
	w.Eventually(settle, func() error {
		got, err := nodeclaim.ClaimForNode(w.Ctx, w.Mgr.GetClient(), node)
		if err == nil && got == nil {
			err = fmt.Errorf("the cache has no claim for %s yet", providerID)
		}
		return err
	})
	return claim, node
}

// node creates a registered spot Node for the provider id.
func (w *world) node(name, providerID string) *corev1.Node {
	w.T.Helper()
	node := w.Node(name, providerID)
	node.Spec.Taints = nil
	node.Labels[corev1.LabelInstanceTypeStable] = "m6i.large"
	node.Labels[corev1.LabelTopologyZone] = "us-east-1a"
	node.Labels[v1alpha1.LabelCapacityType] = v1alpha1.CapacityTypeSpot
	w.Create(node)
	return node
}

// mark writes the mark onto the Node, as the Lambda does.
func (w *world) mark(node *corev1.Node, m interruption.Mark) {
	w.T.Helper()
	w.Update(node, func() { interruption.MarkNode(node, m) })
}

// deleting returns a check that the claim is being deleted.
func (w *world) deleting(claim *v1alpha1.NodeClaim) func() error {
	return func() error {
		if err := w.Get(claim); err != nil {
			return err
		}
		if claim.DeletionTimestamp.IsZero() {
			return fmt.Errorf("claim %s is not being deleted", claim.Name)
		}
		return nil
	}
}

// notDeleted fails the test if the claim is being deleted or the controller
// deleted any claim.
func (w *world) notDeleted(claim *v1alpha1.NodeClaim) {
	w.T.Helper()
	if err := w.Get(claim); err != nil {
		w.T.Fatalf("claim %s: %v", claim.Name, err)
	}
	if !claim.DeletionTimestamp.IsZero() {
		w.T.Errorf("claim %s is being deleted, want it left alone", claim.Name)
	}
	if n := w.kube.deletes.Load(); n != 0 {
		w.T.Errorf("the controller deleted %d claims, want none", n)
	}
}

// event waits until the recorder holds n events of the reason about the
// object, and returns them.
func (w *world) event(object, reason string, n int) []recorded {
	w.T.Helper()
	var got []recorded
	w.Eventually(settle, func() error {
		if got = w.events.Find(object, reason); len(got) != n {
			return fmt.Errorf("%d %s events about %s, want %d: %v", len(got), reason, object, n, w.events.All())
		}
		return nil
	})
	return got
}

// resync runs the controller's Reconcile for the Node once the manager's
// cache holds its current version, as a periodic resync would.
func (w *world) resync(node *corev1.Node) {
	w.T.Helper()
	if err := w.Get(node); err != nil {
		w.T.Fatal(err)
	}
	w.Eventually(settle, func() error {
		cached := &corev1.Node{}
		if err := w.Mgr.GetClient().Get(w.Ctx, client.ObjectKeyFromObject(node), cached); err != nil {
			return err
		}
		if cached.ResourceVersion != node.ResourceVersion {
			return fmt.Errorf("the cache has node %s at %s, want %s", node.Name, cached.ResourceVersion, node.ResourceVersion)
		}
		return nil
	})
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(node)}
	if _, err := w.ctrl.Reconcile(w.Ctx, req); err != nil {
		w.T.Fatalf("reconciling %s: %v", node.Name, err)
	}
}

// margins returns the deadline margin histogram's sample count and sum.
func margins(t *testing.T) (uint64, float64) {
	t.Helper()
	m := &dto.Metric{}
	if err := interruption.DeadlineMargin.Write(m); err != nil {
		t.Fatalf("reading the deadline margin histogram: %v", err)
	}
	return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
}

// countingClient counts the NodeClaim deletes made through it.
type countingClient struct {
	client.Client
	deletes atomic.Int32
}

func (c *countingClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	if _, ok := obj.(*v1alpha1.NodeClaim); ok {
		c.deletes.Add(1)
	}
	return c.Client.Delete(ctx, obj, opts...)
}

// offerings is an OfferingMarker recording its calls.
type offerings struct {
	mu    sync.Mutex
	calls []offeringCall
}

type offeringCall struct{ instanceType, zone, capacityType, reason string }

func (o *offerings) MarkOfferingUnavailable(instanceType, zone, capacityType, reason string) time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls = append(o.calls, offeringCall{instanceType, zone, capacityType, reason})
	return 3 * time.Minute
}

func (o *offerings) marked() []offeringCall {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]offeringCall(nil), o.calls...)
}

// recorder keeps the events the controller publishes.
type (
	recorder = eventstest.Recorder
	recorded = eventstest.Recorded
)
