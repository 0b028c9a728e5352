package termination_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/nodeclaim/nodeclaimtest"
	"github.com/stowage-dev/stowage/controller/termination"
)

// TestDeletingAClaimDrainsItsNodeThroughPDBs: deleting a claim taints its
// Node, evicts its pods through the Eviction API, and waits while a PDB
// refuses an eviction; once the PDB allows it, the instance is terminated and
// the Node and claim go. DaemonSet pods, mirror pods and pods tolerating the
// disrupted taint are never evicted.
func TestDeletingAClaimDrainsItsNodeThroughPDBs(t *testing.T) {
	e := start(t)
	pool := e.NodePool(nil)
	e.Create(pool)
	claim, node := registered(t, e, pool)
	ns := e.Namespace()
	web, worker := e.Pod(ns, "web", node.Name), e.Pod(ns, "worker", node.Name)
	agent, mirror, tolerant := e.Pod(ns, "agent", node.Name), e.Pod(ns, "mirror", node.Name), e.Pod(ns, "tolerant", node.Name)
	agent.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent",
		UID: "5a4f8c1e-0000-4000-8000-000000000001", Controller: ptr.To(true)}}
	mirror.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "static"}
	tolerant.Spec.Tolerations = []corev1.Toleration{{Key: v1alpha1.TaintKeyDisrupted, Operator: corev1.TolerationOpExists}}
	running(e, web, worker, agent, mirror, tolerant)
	pdb := blockingPDB(e, ns, "web")
	refused := nodeclaimtest.CounterValue(t, termination.Evictions.WithLabelValues(termination.OutcomeRefused))

	e.Delete(claim)
	e.Eventually(settle, tainted(e, node))
	e.Eventually(settle, func() error { return e.Gone(worker) })
	e.Eventually(settle, func() error {
		if nodeclaimtest.CounterValue(t, termination.Evictions.WithLabelValues(termination.OutcomeRefused)) == refused {
			return fmt.Errorf("no eviction refused yet")
		}
		return nil
	})
	notTerminating(t, e, web)
	if !e.Cloud.Live(e.Ctx, claim.Status.ProviderID) {
		t.Fatal("instance terminated while a PDB still held a pod on its node")
	}

	e.UpdateStatus(pdb, func() { pdb.Status.DisruptionsAllowed = 1 })
	e.Eventually(settle, func() error { return e.Gone(web) })
	finished(e, claim, node, claim.Status.ProviderID)
	notTerminating(t, e, agent, mirror, tolerant)
	e.ExpectCounter("nodeclaims_terminated_total", termination.Terminated.WithLabelValues(pool.Name), 0, 1)
}

// blockingPDB creates a PDB over the app's pods and writes the status
// kube-controller-manager's disruption controller (not running here) would
// write for a budget that allows no disruption.
func blockingPDB(e *nodeclaimtest.Env, ns, app string) *policyv1.PodDisruptionBudget {
	e.T.Helper()
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: app},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromInt32(1)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
		},
	}
	e.Create(pdb)
	e.UpdateStatus(pdb, func() {
		pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation,
			DisruptionsAllowed: 0, CurrentHealthy: 0, DesiredHealthy: 1, ExpectedPods: 1}
	})
	return pdb
}

// TestDoNotDisruptPodsHoldTheDrainUntilTheGracePeriod: pods annotated
// do-not-disrupt (Stowage's or Karpenter's annotation) are not evicted, and
// hold the instance, until the claim's terminationGracePeriod has passed on
// the injected clock; then they are deleted and termination completes.
func TestDoNotDisruptPodsHoldTheDrainUntilTheGracePeriod(t *testing.T) {
	e := start(t)
	grace := 10 * time.Minute
	pool := e.NodePool(nil)
	pool.Spec.Template.Spec.TerminationGracePeriod = &metav1.Duration{Duration: grace}
	e.Create(pool)
	claim, node := registered(t, e, pool)
	ns := e.Namespace()
	precious, legacy, plain := e.Pod(ns, "precious", node.Name), e.Pod(ns, "legacy", node.Name), e.Pod(ns, "plain", node.Name)
	precious.Annotations = map[string]string{v1alpha1.AnnotationDoNotDisrupt: "true"}
	legacy.Annotations = map[string]string{v1alpha1.AnnotationKarpenterDoNotDisrupt: "true"}
	running(e, precious, legacy, plain)
	deleted := nodeclaimtest.CounterValue(t, termination.Evictions.WithLabelValues(termination.OutcomeDeleted))

	e.Delete(claim)
	e.Eventually(settle, tainted(e, node))
	e.Eventually(settle, func() error { return e.Gone(plain) })
	notTerminating(t, e, precious, legacy)
	if !e.Cloud.Live(e.Ctx, claim.Status.ProviderID) {
		t.Fatal("instance terminated while do-not-disrupt pods were on its node")
	}

	e.Clock.Step(grace + time.Minute)
	e.Eventually(settle, func() error { return e.Gone(precious) })
	e.Eventually(settle, func() error { return e.Gone(legacy) })
	finished(e, claim, node, claim.Status.ProviderID)
	e.ExpectCounter("evictions_total{outcome=deleted}", termination.Evictions.WithLabelValues(termination.OutcomeDeleted), deleted, 2)
}

// TestDeletingANodeTerminatesItsClaim: a Node deleted directly has its claim
// deleted, and goes the same way: drained, instance terminated, both gone.
func TestDeletingANodeTerminatesItsClaim(t *testing.T) {
	e := start(t)
	pool := e.NodePool(nil)
	e.Create(pool)
	claim, node := registered(t, e, pool)
	pod := e.Pod(e.Namespace(), "app", node.Name)
	running(e, pod)

	e.Delete(node)
	e.Eventually(settle, func() error { return e.Gone(pod) })
	finished(e, claim, node, claim.Status.ProviderID)
}

// TestDeletingAnUnregisteredClaimTerminatesItsInstance: a claim whose Node
// never registered has nothing to drain; its instance is terminated.
func TestDeletingAnUnregisteredClaimTerminatesItsInstance(t *testing.T) {
	e := start(t)
	claim := e.NodeClaim("claim", nil)
	e.Create(claim)
	e.Eventually(settle, isTrue(e, claim, v1alpha1.ConditionLaunched))
	deletes := e.Cloud.Deletes()

	e.Delete(claim)
	e.Eventually(settle, func() error { return e.Gone(claim) })
	if e.Cloud.Live(e.Ctx, claim.Status.ProviderID) {
		t.Errorf("instance %s is still running", claim.Status.ProviderID)
	}
	if got := e.Cloud.Deletes() - deletes; got < 2 {
		t.Errorf("Delete called %d times, want it called until it reported the instance gone (at least 2)", got)
	}
}

// TestDeletingANodeNoClaimOwnsDrainsItAndTerminatesItsInstance: a Node
// carrying the finalizer whose claim is gone is drained and its instance
// terminated by the Node controller alone.
func TestDeletingANodeNoClaimOwnsDrainsItAndTerminatesItsInstance(t *testing.T) {
	e := start(t)
	created, err := e.Cloud.Create(e.Ctx, e.NodeClaim("forgotten", nil))
	if err != nil {
		t.Fatalf("launching: %v", err)
	}
	node := e.KwokNode("orphan", created.Status.ProviderID)
	node.Finalizers = []string{v1alpha1.TerminationFinalizer}
	e.Create(node)
	pod := e.Pod(e.Namespace(), "app", node.Name)
	running(e, pod)

	e.Delete(node)
	e.Eventually(settle, func() error { return e.Gone(pod) })
	e.Eventually(settle, func() error { return e.Gone(node) })
	if e.Cloud.Live(e.Ctx, created.Status.ProviderID) {
		t.Errorf("instance %s is still running", created.Status.ProviderID)
	}
}

// TestADrainedClaimIsMarkedInstanceTerminating: once its node is drained
// and the cloud accepted the termination, a claim says so
// (InstanceTerminating, which disruption budgets no longer count) for as
// long as its instance shuts down, and goes once the instance is gone.
func TestADrainedClaimIsMarkedInstanceTerminating(t *testing.T) {
	e := start(t)
	pool := e.NodePool(nil)
	e.Create(pool)
	claim, node := registered(t, e, pool)
	e.Cloud.HoldDeletes(true)

	e.Delete(claim)
	e.Eventually(settle, isTrue(e, claim, v1alpha1.ConditionInstanceTerminating))
	if !e.Cloud.Live(e.Ctx, claim.Status.ProviderID) {
		t.Fatal("the instance is gone while the cloud holds its termination")
	}
	e.Cloud.HoldDeletes(false)
	finished(e, claim, node, claim.Status.ProviderID)
}
