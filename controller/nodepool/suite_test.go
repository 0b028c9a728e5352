package nodepool_test

import (
	"context"
	"fmt"
	"github.com/stowage-dev/stowage/controller/events/eventstest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/nodeclaim/nodeclaimtest"
	"github.com/stowage-dev/stowage/controller/nodepool"
	"github.com/stowage-dev/stowage/internal/testenv"
)

// settle bounds every wait on the controller; it reacts in well under a second.
const settle = 20 * time.Second

// holdFinalizer keeps a deleted claim in place, as the termination finalizer
// would while its Node drains.
const holdFinalizer = "test.stowage.dev/hold"

func TestMain(m *testing.M) { nodeclaimtest.Main(m, testenv.Options{}) }

// world is a test's Env running the NodePool status controller.
type world struct {
	*nodeclaimtest.Env
	events *recorder
}

func start(t *testing.T) *world {
	t.Helper()
	e := nodeclaimtest.New(t)
	w := &world{Env: e, events: &eventstest.Recorder{}}
	if err := nodepool.New(e.Clock, e.Mgr.GetClient(), nodepool.Options{Recorder: w.events}).Register(e.Mgr); err != nil {
		t.Fatalf("registering the controller: %v", err)
	}
	e.Start()
	return w
}

// className is the name of the test's NodeClass.
func (w *world) className() string { return w.ID + "-class" }

// pool creates a pool named for the test, referencing the test's NodeClass,
// with the limits.
func (w *world) pool(limits corev1.ResourceList) *v1alpha1.NodePool {
	w.T.Helper()
	pool := w.NodePool(nil)
	pool.Spec.Template.Spec.NodeClassRef.Name = w.className()
	pool.Spec.Limits = limits
	w.Create(pool)
	return pool
}

// nodeClass creates the test's NodeClass with a Ready condition of the status
// and message; status "" leaves the NodeClass unresolved.
func (w *world) nodeClass(status metav1.ConditionStatus, message string) *v1alpha1.NodeClass {
	w.T.Helper()
	nc := &v1alpha1.NodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: w.className()},
		Spec: v1alpha1.NodeClassSpec{
			AMISelectorTerms:           []v1alpha1.AMISelectorTerm{{Alias: "al2023@latest"}},
			SubnetSelectorTerms:        []v1alpha1.SelectorTerm{{Tags: map[string]string{"stowage.dev/discovery": w.ID}}},
			SecurityGroupSelectorTerms: []v1alpha1.SecurityGroupSelectorTerm{{Tags: map[string]string{"stowage.dev/discovery": w.ID}}},
			Role:                       "StowageNodeRole-" + w.ID,
		},
	}
	w.Create(nc)
	if status != "" {
		w.setClassReady(nc, status, message)
	}
	return nc
}

// setClassReady writes the NodeClass's Ready condition, as its status
// controller would.
func (w *world) setClassReady(nc *v1alpha1.NodeClass, status metav1.ConditionStatus, message string) {
	w.T.Helper()
	w.UpdateStatus(nc, func() {
		nc.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: status, Reason: "Test",
			Message: message, LastTransitionTime: metav1.NewTime(w.Clock.Now())}}
	})
}

// claim creates a launched claim of the pool with the capacity, held by a
// finalizer once deleted.
func (w *world) claim(name string, pool *v1alpha1.NodePool, capacity corev1.ResourceList) *v1alpha1.NodeClaim {
	w.T.Helper()
	claim := w.NodeClaim(name, pool)
	claim.Finalizers = []string{holdFinalizer}
	w.Create(claim)
	w.UpdateStatus(claim, func() { claim.Status.Capacity = capacity })
	w.T.Cleanup(func() {
		// The test's context is done by now: patch with a fresh one.
		patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))
		if err := w.Kube.Patch(context.Background(), claim, patch); client.IgnoreNotFound(err) != nil {
			w.T.Errorf("releasing claim %s: %v", claim.Name, err)
		}
	})
	return claim
}

// release removes the claim's hold finalizer.
func (w *world) release(claim *v1alpha1.NodeClaim) {
	w.T.Helper()
	w.Update(claim, func() { claim.Finalizers = nil })
}

// expectResources waits until the pool's status.resources are want.
func (w *world) expectResources(pool *v1alpha1.NodePool, want corev1.ResourceList) {
	w.T.Helper()
	w.Eventually(settle, func() error {
		if err := w.Get(pool); err != nil {
			return err
		}
		got := pool.Status.Resources
		if len(got) != len(want) {
			return fmt.Errorf("nodepool %s has resources %v, want %v", pool.Name, got, want)
		}
		for name, q := range want {
			if g, ok := got[name]; !ok || g.Cmp(q) != 0 {
				return fmt.Errorf("nodepool %s has resources %v, want %v", pool.Name, got, want)
			}
		}
		return nil
	})
}

// expectReady waits until the pool's Ready condition has the status and
// reason, and returns it.
func (w *world) expectReady(pool *v1alpha1.NodePool, status metav1.ConditionStatus, reason string) metav1.Condition {
	w.T.Helper()
	var got metav1.Condition
	w.Eventually(settle, func() error {
		if err := w.Get(pool); err != nil {
			return err
		}
		for _, c := range pool.Status.Conditions {
			if c.Type == v1alpha1.ConditionReady && c.Status == status && c.Reason == reason {
				got = c
				return nil
			}
		}
		return fmt.Errorf("nodepool %s has conditions %+v, want Ready %s (%s)", pool.Name, pool.Status.Conditions, status, reason)
	})
	return got
}

// expectGauge waits until the pool's series of the gauge for the resource
// type is want; the controller sets it right after the write a test observes.
func (w *world) expectGauge(g *prometheus.GaugeVec, pool, resourceType string, want float64) {
	w.T.Helper()
	w.Eventually(5*time.Second, func() error {
		m := &dto.Metric{}
		if err := g.WithLabelValues(pool, resourceType).Write(m); err != nil {
			return err
		}
		if got := m.GetGauge().GetValue(); got != want {
			return fmt.Errorf("%s %s is %v, want %v", pool, resourceType, got, want)
		}
		return nil
	})
}

// series counts the pool's series of the gauge.
func series(g *prometheus.GaugeVec, pool string) int {
	ch := make(chan prometheus.Metric)
	go func() { g.Collect(ch); close(ch) }()
	n := 0
	for m := range ch {
		d := &dto.Metric{}
		_ = m.Write(d)
		for _, l := range d.GetLabel() {
			if l.GetName() == nodepool.LabelNodePool && l.GetValue() == pool {
				n++
			}
		}
	}
	return n
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

// resources builds a ResourceList from name, quantity pairs.
func resources(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

// recorder keeps the events the controller publishes.
type (
	recorder = eventstest.Recorder
	recorded = eventstest.Recorded
)
