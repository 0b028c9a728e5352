package nodeclass_test

import (
	"context"
	"fmt"
	"github.com/stowage-dev/stowage/controller/events/eventstest"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/nodeclaim/nodeclaimtest"
	"github.com/stowage-dev/stowage/controller/nodeclass"
	"github.com/stowage-dev/stowage/internal/testenv"
)

// settle bounds every wait on the controller; it reacts in well under a second.
const settle = 20 * time.Second

func TestMain(m *testing.M) { nodeclaimtest.Main(m, testenv.Options{}) }

// world is a test's Env running the NodeClass status controller on a fake
// Resolver.
type world struct {
	*nodeclaimtest.Env
	ctrl     *nodeclass.Controller
	resolver *resolver
	events   *recorder
}

func start(t *testing.T, status v1alpha1.NodeClassStatus) *world {
	t.Helper()
	e := nodeclaimtest.New(t)
	w := &world{Env: e, resolver: &resolver{status: status}, events: &eventstest.Recorder{}}
	w.ctrl = nodeclass.New(e.Clock, e.Mgr.GetClient(), w.resolver, nodeclass.Options{Recorder: w.events})
	if err := w.ctrl.Register(e.Mgr); err != nil {
		t.Fatalf("registering the controller: %v", err)
	}
	e.Start()
	return w
}

// nodeClass creates a NodeClass named for the test.
func (w *world) nodeClass() *v1alpha1.NodeClass {
	w.T.Helper()
	nc := &v1alpha1.NodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: w.ID + "-class"},
		Spec: v1alpha1.NodeClassSpec{
			AMISelectorTerms:           []v1alpha1.AMISelectorTerm{{Alias: "al2023@latest"}},
			SubnetSelectorTerms:        []v1alpha1.SelectorTerm{{Tags: map[string]string{"stowage.dev/discovery": w.ID}}},
			SecurityGroupSelectorTerms: []v1alpha1.SecurityGroupSelectorTerm{{Tags: map[string]string{"stowage.dev/discovery": w.ID}}},
			Role:                       "StowageNodeRole-" + w.ID,
		},
	}
	w.Create(nc)
	return nc
}

// expectReady waits until the NodeClass's Ready condition has the status and
// was observed at its current generation, and returns the condition.
func (w *world) expectReady(nc *v1alpha1.NodeClass, status metav1.ConditionStatus) metav1.Condition {
	w.T.Helper()
	var got metav1.Condition
	w.Eventually(settle, func() error {
		if err := w.Get(nc); err != nil {
			return err
		}
		for _, c := range nc.Status.Conditions {
			if c.Type == v1alpha1.ConditionReady && c.Status == status && c.ObservedGeneration == nc.Generation {
				got = c
				return nil
			}
		}
		return fmt.Errorf("nodeclass %s at generation %d has conditions %+v, want Ready %s", nc.Name, nc.Generation, nc.Status.Conditions, status)
	})
	return got
}

// reconcile runs the controller's Reconcile once the manager's cache holds
// the NodeClass's current version, as the periodic resync would.
func (w *world) reconcile(nc *v1alpha1.NodeClass) reconcile.Result {
	w.T.Helper()
	if err := w.Get(nc); err != nil {
		w.T.Fatal(err)
	}
	w.Eventually(settle, func() error {
		cached := &v1alpha1.NodeClass{}
		if err := w.Mgr.GetClient().Get(w.Ctx, client.ObjectKeyFromObject(nc), cached); err != nil {
			return err
		}
		if cached.ResourceVersion != nc.ResourceVersion {
			return fmt.Errorf("the cache has nodeclass %s at %s, want %s", nc.Name, cached.ResourceVersion, nc.ResourceVersion)
		}
		return nil
	})
	res, err := w.ctrl.Reconcile(w.Ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(nc)})
	if err != nil {
		w.T.Fatalf("reconciling %s: %v", nc.Name, err)
	}
	return res
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

// gauge returns the ready gauge of the NodeClass.
func gauge(t *testing.T, name string) float64 {
	t.Helper()
	m := &dto.Metric{}
	if err := nodeclass.Ready.WithLabelValues(name).Write(m); err != nil {
		t.Fatalf("reading the ready gauge: %v", err)
	}
	return m.GetGauge().GetValue()
}

// ready returns a resolved status, as the AWS provider reports it.
func ready() v1alpha1.NodeClassStatus {
	return v1alpha1.NodeClassStatus{
		Subnets:         []v1alpha1.Subnet{{ID: "subnet-0a", Zone: "us-east-1a", ZoneID: "use1-az1"}},
		SecurityGroups:  []v1alpha1.SecurityGroup{{ID: "sg-0a", Name: "nodes"}},
		AMIs:            []v1alpha1.AMI{{ID: "ami-0a", Name: "al2023"}},
		InstanceProfile: "stowage-profile",
		Conditions:      []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Resolved"}},
	}
}

// unauthorized returns the status of a NodeClass whose role lacks a permission.
func unauthorized() v1alpha1.NodeClassStatus {
	return v1alpha1.NodeClassStatus{Conditions: []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse,
		Reason: "Unauthorized", Message: "stowage is not authorized to perform iam:GetInstanceProfile; grant it to the controller's role"}}}
}

// resolver is a nodeclass.Resolver returning a status the test sets.
type resolver struct {
	mu     sync.Mutex
	status v1alpha1.NodeClassStatus
	calls  int
}

func (r *resolver) Status(_ context.Context, nc *v1alpha1.NodeClass) v1alpha1.NodeClassStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	return *r.status.DeepCopy()
}

func (r *resolver) set(status v1alpha1.NodeClassStatus) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status = status
}

// recorder keeps the events the controller publishes.
type (
	recorder = eventstest.Recorder
	recorded = eventstest.Recorded
)
