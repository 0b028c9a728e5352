package drift_test

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
	"github.com/stowage-dev/stowage/controller/nodeclaim/drift"
	"github.com/stowage-dev/stowage/controller/nodeclaim/nodeclaimtest"
	"github.com/stowage-dev/stowage/internal/testenv"
)

func TestMain(m *testing.M) { nodeclaimtest.Main(m, testenv.Options{}) }

const settle = 20 * time.Second

// world is a pool, its class and one launched claim of it recording both
// hashes, with the drift controller running.
type world struct {
	e     *nodeclaimtest.Env
	pool  *v1alpha1.NodePool
	class *v1alpha1.NodeClass
	claim *v1alpha1.NodeClaim
}

func newWorld(t *testing.T) *world {
	e := nodeclaimtest.New(t)
	w := &world{e: e, pool: e.NodePool(map[string]string{"example.com/team": "web"})}
	w.class = &v1alpha1.NodeClass{ObjectMeta: metav1.ObjectMeta{Name: e.ID + "-class"}, Spec: v1alpha1.NodeClassSpec{
		AMISelectorTerms:           []v1alpha1.AMISelectorTerm{{Alias: "al2023@latest"}},
		SubnetSelectorTerms:        []v1alpha1.SelectorTerm{{Tags: map[string]string{"k": "v"}}},
		SecurityGroupSelectorTerms: []v1alpha1.SecurityGroupSelectorTerm{{Tags: map[string]string{"k": "v"}}},
		Role:                       "StowageNodeRole",
	}}
	w.pool.Spec.Template.Spec.NodeClassRef.Name = w.class.Name
	w.pool.Spec.Template.Spec.Requirements = []v1alpha1.NodeSelectorRequirementWithMinValues{
		{Key: v1alpha1.LabelInstanceFamily, Operator: v1alpha1.OperatorIn, Values: []string{"m6i", "c6i"}}}
	e.Create(w.class)
	e.Create(w.pool)
	w.claim = e.NodeClaim("a", w.pool)
	w.claim.Spec.NodeClassRef.Name = w.class.Name
	w.claim.Labels[v1alpha1.LabelInstanceFamily] = "c6i"
	w.claim.Annotations = map[string]string{v1alpha1.AnnotationNodePoolHash: v1alpha1.NodePoolHash(w.pool),
		v1alpha1.AnnotationNodeClassHash: v1alpha1.NodeClassHash(w.class), v1alpha1.AnnotationHashVersion: v1alpha1.HashVersion}
	e.Create(w.claim)
	e.UpdateStatus(w.claim, func() {
		w.claim.Status.ProviderID = "fake:///" + w.claim.Name
		w.claim.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionLaunched, Status: metav1.ConditionTrue,
			Reason: v1alpha1.ConditionLaunched, LastTransitionTime: metav1.NewTime(e.Clock.Now())}}
	})
	if err := drift.New(e.Clock, e.Mgr.GetClient(), e.Cloud, drift.Options{}).Register(e.Mgr); err != nil {
		t.Fatal(err)
	}
	e.Start()
	return w
}

// expect waits until the claim's Drifted condition has the reason ("" for
// no condition).
func (w *world) expect(reason string) {
	w.e.T.Helper()
	w.e.Eventually(settle, func() error {
		if err := w.e.Get(w.claim); err != nil {
			return err
		}
		cond := nodeclaim.Condition(w.claim, v1alpha1.ConditionDrifted)
		switch {
		case reason == "" && cond == nil, cond != nil && cond.Status == metav1.ConditionTrue && cond.Reason == reason:
			return nil
		}
		return fmt.Errorf("drifted condition %+v, want reason %q", cond, reason)
	})
}

// reconcile checks the claim once, synchronously, with its own controller:
// an absence asserted after it does not depend on the running one's timing.
func (w *world) reconcile() {
	w.e.T.Helper()
	ctrl := drift.New(w.e.Clock, w.e.Kube, w.e.Cloud, drift.Options{})
	if _, err := ctrl.Reconcile(w.e.Ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(w.claim)}); err != nil {
		w.e.T.Fatal(err)
	}
}

func TestDriftDetection(t *testing.T) {
	w := newWorld(t)
	e := w.e
	// The controller has looked at the claim: it re-checks after the poll
	// interval on the wall clock, so a settled claim without the condition
	// is not drifted.
	w.expect("")

	// A template label changed: the pool drifted the node; back, it did not.
	e.Update(w.pool, func() { w.pool.Spec.Template.ObjectMeta.Labels["example.com/team"] = "api" })
	w.expect(drift.ReasonNodePoolDrifted)
	e.Update(w.pool, func() { w.pool.Spec.Template.ObjectMeta.Labels["example.com/team"] = "web" })
	w.expect("")

	// Widening a requirement drifts nothing; narrowing it past the node's
	// family does.
	e.Update(w.pool, func() { w.pool.Spec.Template.Spec.Requirements[0].Values = []string{"m6i", "c6i", "r6i"} })
	w.reconcile()
	w.expect("")
	e.Update(w.pool, func() { w.pool.Spec.Template.Spec.Requirements[0].Values = []string{"m6i"} })
	w.expect(drift.ReasonRequirementsDrifted)
	e.Update(w.pool, func() { w.pool.Spec.Template.Spec.Requirements[0].Values = []string{"m6i", "c6i"} })
	w.expect("")

	// A kubelet setting of the class changed.
	e.Update(w.class, func() { w.class.Spec.Kubelet = &v1alpha1.KubeletConfiguration{MaxPods: ptr.To[int32](58)} })
	w.expect(drift.ReasonNodeClassDrifted)
	e.Update(w.class, func() { w.class.Spec.Kubelet = nil })
	w.expect("")
}

// The cloud's own drift (a new image behind the class's alias) is found on the
// next look.
func TestCloudDrift(t *testing.T) {
	w := newWorld(t)
	w.expect("")
	w.e.Cloud.SetDrifted(cloudprovider.DriftImage)
	w.e.Update(w.claim, func() { w.claim.Annotations["example.com/touch"] = "1" }) // wakes the claim
	w.expect(string(cloudprovider.DriftImage))
	w.e.Cloud.SetDrifted("")
	w.e.Update(w.claim, func() { w.claim.Annotations["example.com/touch"] = "2" })
	w.expect("")
}

// A hash recorded under another HashVersion is not compared: a new formula
// must not drift every node.
func TestHashesOfAnotherVersionAreNotCompared(t *testing.T) {
	e := nodeclaimtest.New(t)
	pool := e.NodePool(map[string]string{"example.com/team": "web"})
	e.Create(pool)
	claim := e.NodeClaim("old", pool)
	claim.Annotations = map[string]string{v1alpha1.AnnotationNodePoolHash: "0123456789abcdef", v1alpha1.AnnotationHashVersion: "v0"}
	e.Create(claim)
	e.UpdateStatus(claim, func() {
		claim.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionLaunched, Status: metav1.ConditionTrue,
			Reason: v1alpha1.ConditionLaunched, LastTransitionTime: metav1.NewTime(e.Clock.Now())}}
	})
	ctrl := drift.New(e.Clock, e.Kube, e.Cloud, drift.Options{})
	for _, version := range []string{"v0", v1alpha1.HashVersion} {
		e.Update(claim, func() { claim.Annotations[v1alpha1.AnnotationHashVersion] = version })
		if _, err := ctrl.Reconcile(e.Ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(claim)}); err != nil {
			t.Fatal(err)
		}
		if err := e.Get(claim); err != nil {
			t.Fatal(err)
		}
		drifted := nodeclaim.IsTrue(claim, v1alpha1.ConditionDrifted)
		if want := version == v1alpha1.HashVersion; drifted != want {
			t.Errorf("hash version %s: drifted %v, want %v", version, drifted, want)
		}
	}
}
