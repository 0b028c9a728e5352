package lifecycle_test

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/nodeclaim/lifecycle"
	"github.com/stowage-dev/stowage/controller/nodeclaim/nodeclaimtest"
)

// daemonSet is a DaemonSet of ns whose pods have the node selector and
// tolerations given.
func daemonSet(ns, name string, selector map[string]string, tolerations ...corev1.Toleration) *appsv1.DaemonSet {
	labels := map[string]string{"app": name}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				NodeSelector: selector, Tolerations: tolerations,
				Containers: []corev1.Container{{Name: "agent", Image: "registry.invalid/agent:1", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}}}},
			}},
		},
	}
}

// daemonPod is the DaemonSet controller's pod of ds, bound to node.
func daemonPod(e *nodeclaimtest.Env, ds *appsv1.DaemonSet, node string) *corev1.Pod {
	pod := e.Pod(ds.Namespace, ds.Name+"-"+node, node)
	pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.Name, UID: ds.UID, Controller: ptr.To(true)}}
	return pod
}

// cordoned returns a check that the node's cordon is (or is not) Stowage's.
func cordoned(e *nodeclaimtest.Env, node *corev1.Node, want bool) func() error {
	return func() error {
		if err := e.Get(node); err != nil {
			return err
		}
		ours := node.Annotations[lifecycle.AnnotationDaemonSetCordon] == "true"
		if node.Spec.Unschedulable != want || ours != want {
			return fmt.Errorf("node %s unschedulable=%v, annotated=%v; want %v", node.Name, node.Spec.Unschedulable, ours, want)
		}
		return nil
	}
}

// registeredReady launches claim, registers its Node and makes it Ready.
func registeredReady(e *nodeclaimtest.Env, claim *v1alpha1.NodeClaim, name string) *corev1.Node {
	e.T.Helper()
	e.Create(claim)
	e.Eventually(settle, hasCondition(e, claim, v1alpha1.ConditionLaunched, metav1.ConditionTrue, ""))
	node := e.Node(name, claim.Status.ProviderID)
	e.Create(node)
	e.Eventually(settle, hasCondition(e, claim, v1alpha1.ConditionRegistered, metav1.ConditionTrue, ""))
	e.SetReady(node)
	return node
}

// TestNewNodeStaysCordonedUntilItsDaemonSetPodsAreBound: the Node registers
// cordoned, and stays so, with Initialized saying which DaemonSet it waits
// for, until the pod of every DaemonSet that runs there is bound; a
// DaemonSet whose selector the Node does not match, or that does not
// tolerate the pool's taint, is not waited for.
func TestNewNodeStaysCordonedUntilItsDaemonSetPodsAreBound(t *testing.T) {
	e := start(t, lifecycle.Options{})
	ns := e.Namespace()
	agent := daemonSet(ns, "agent", nil)
	elsewhere := daemonSet(ns, "gpu-agent", map[string]string{"example.com/gpu": "true"})
	untolerated := daemonSet(ns, "plain", nil)
	pool := e.NodePool(nil)
	pool.Spec.Template.Spec.Taints = []corev1.Taint{dedicatedTaint}
	agent.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: dedicatedTaint.Key, Operator: corev1.TolerationOpExists}}
	for _, o := range []*appsv1.DaemonSet{agent, elsewhere, untolerated} {
		e.Create(o)
	}
	e.Create(pool)
	node := registeredReady(e, e.NodeClaim("ds", pool), "ds")
	claim := e.NodeClaim("ds", pool)

	e.Eventually(settle, hasCondition(e, claim, v1alpha1.ConditionInitialized, metav1.ConditionUnknown, lifecycle.ReasonDaemonSetPodsNotBound))
	if got := claimCondition(e, claim, v1alpha1.ConditionInitialized).Message; got != fmt.Sprintf("daemonset %s/agent has no pod bound to node %s", ns, node.Name) {
		t.Errorf("Initialized message %q, want it to name the agent DaemonSet only", got)
	}
	if err := cordoned(e, node, true)(); err != nil {
		t.Fatal(err)
	}
	e.Create(daemonPod(e, agent, node.Name))
	e.Eventually(settle, hasCondition(e, claim, v1alpha1.ConditionInitialized, metav1.ConditionTrue, ""))
	e.Eventually(settle, cordoned(e, node, false))
}

// TestBrokenDaemonSetCannotHoldANodeForever: a DaemonSet whose pod never
// binds keeps the Node cordoned for DaemonSetTimeout after it became Ready,
// and no longer.
func TestBrokenDaemonSetCannotHoldANodeForever(t *testing.T) {
	e := start(t, lifecycle.Options{DaemonSetTimeout: 2 * time.Minute})
	e.Create(daemonSet(e.Namespace(), "broken", nil))
	pool := e.NodePool(nil)
	e.Create(pool)
	node := registeredReady(e, e.NodeClaim("stuck", pool), "stuck")
	claim := e.NodeClaim("stuck", pool)
	e.Eventually(settle, hasCondition(e, claim, v1alpha1.ConditionInitialized, metav1.ConditionUnknown, lifecycle.ReasonDaemonSetPodsNotBound))
	waitForAlarm(e)

	e.Clock.Step(2*time.Minute + time.Second)
	e.Eventually(settle, hasCondition(e, claim, v1alpha1.ConditionInitialized, metav1.ConditionTrue, ""))
	e.Eventually(settle, cordoned(e, node, false))
}

func claimCondition(e *nodeclaimtest.Env, claim *v1alpha1.NodeClaim, condType string) metav1.Condition {
	e.T.Helper()
	if err := e.Get(claim); err != nil {
		e.T.Fatal(err)
	}
	for _, c := range claim.Status.Conditions {
		if c.Type == condType {
			return c
		}
	}
	e.T.Fatalf("claim %s has no %s condition", claim.Name, condType)
	return metav1.Condition{}
}
