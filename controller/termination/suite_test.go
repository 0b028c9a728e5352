package termination_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
	"github.com/stowage-dev/stowage/controller/nodeclaim/lifecycle"
	"github.com/stowage-dev/stowage/controller/nodeclaim/nodeclaimtest"
	"github.com/stowage-dev/stowage/controller/termination"
	"github.com/stowage-dev/stowage/internal/testenv"
)

// settle bounds every wait on the controllers and on kwok.
const settle = 30 * time.Second

// The suite runs kwok as the kubelet of the test Nodes: it runs their pods
// and removes them once deleted, as a kubelet would after an eviction.
func TestMain(m *testing.M) { nodeclaimtest.Main(m, testenv.Options{Kwok: true}) }

// start returns a test's Env running the lifecycle controller (to launch and
// register claims) and the termination controllers, polling fast.
func start(t *testing.T) *nodeclaimtest.Env { return startWith(t, nil) }

// startWith is start with Homes set (nil for none).
func startWith(t *testing.T, homes termination.Homes) *nodeclaimtest.Env {
	t.Helper()
	return startOpts(t, termination.Options{
		DrainPollInterval: 100 * time.Millisecond, InstancePollInterval: 100 * time.Millisecond,
		EvictionRetryBase: 100 * time.Millisecond, EvictionRetryMax: 500 * time.Millisecond, Homes: homes,
	})
}

// startOpts is start with the termination controllers' options.
func startOpts(t *testing.T, opts termination.Options) *nodeclaimtest.Env {
	t.Helper()
	e := nodeclaimtest.New(t)
	if err := lifecycle.New(e.Clock, e.Mgr.GetClient(), e.Cloud, lifecycle.Options{}).Register(e.Mgr); err != nil {
		t.Fatalf("registering the lifecycle controller: %v", err)
	}
	if err := termination.New(e.Clock, e.Mgr.GetClient(), e.Cloud, opts).Register(e.Mgr); err != nil {
		t.Fatalf("registering the termination controllers: %v", err)
	}
	e.Start()
	return e
}

// registered creates a claim of the pool and a kwok Node for its instance,
// and returns both once the claim is Registered.
func registered(t *testing.T, e *nodeclaimtest.Env, pool *v1alpha1.NodePool) (*v1alpha1.NodeClaim, *corev1.Node) {
	t.Helper()
	claim := e.NodeClaim("claim", pool)
	e.Create(claim)
	e.Eventually(settle, isTrue(e, claim, v1alpha1.ConditionLaunched))
	node := e.KwokNode("node", claim.Status.ProviderID)
	e.Create(node)
	e.Eventually(settle, isTrue(e, claim, v1alpha1.ConditionRegistered))
	if err := e.Get(node); err != nil {
		t.Fatal(err)
	}
	if !controllerutil.ContainsFinalizer(node, v1alpha1.TerminationFinalizer) {
		t.Fatalf("registered node finalizers = %v, want %s", node.Finalizers, v1alpha1.TerminationFinalizer)
	}
	return claim, node
}

func isTrue(e *nodeclaimtest.Env, claim *v1alpha1.NodeClaim, condType string) func() error {
	return func() error {
		if err := e.Get(claim); err != nil {
			return err
		}
		if c := nodeclaim.Condition(claim, condType); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("claim %s condition %s = %v", claim.Name, condType, c)
		}
		return nil
	}
}

// running creates the pods and waits until kwok runs them all.
func running(e *nodeclaimtest.Env, pods ...*corev1.Pod) {
	e.T.Helper()
	for _, pod := range pods {
		e.Create(pod)
	}
	for _, pod := range pods {
		e.Eventually(settle, func() error {
			if err := e.Get(pod); err != nil {
				return err
			}
			if pod.Status.Phase != corev1.PodRunning {
				return fmt.Errorf("pod %s is %s", pod.Name, pod.Status.Phase)
			}
			return nil
		})
	}
}

// tainted returns a check that the Node carries the disrupted taint.
func tainted(e *nodeclaimtest.Env, node *corev1.Node) func() error {
	return func() error {
		if err := e.Get(node); err != nil {
			return err
		}
		for _, t := range node.Spec.Taints {
			if t.MatchTaint(&v1alpha1.DisruptedNoScheduleTaint) {
				return nil
			}
		}
		return fmt.Errorf("node %s taints = %v, want %s", node.Name, node.Spec.Taints, v1alpha1.TaintKeyDisrupted)
	}
}

// notTerminating fails the test unless every pod exists and is not being deleted.
func notTerminating(t *testing.T, e *nodeclaimtest.Env, pods ...*corev1.Pod) {
	t.Helper()
	for _, pod := range pods {
		if err := e.Get(pod); err != nil {
			t.Errorf("pod %s: %v", pod.Name, err)
			continue
		}
		if pod.DeletionTimestamp != nil {
			t.Errorf("pod %s is being deleted, want it left alone", pod.Name)
		}
	}
}

// finished waits until the claim, its Node and its instance are all gone.
func finished(e *nodeclaimtest.Env, claim *v1alpha1.NodeClaim, node *corev1.Node, providerID string) {
	e.T.Helper()
	e.Eventually(settle, func() error { return e.Gone(claim) })
	e.Eventually(settle, func() error { return e.Gone(node) })
	if e.Cloud.Live(e.Ctx, providerID) {
		e.T.Errorf("instance %s is still running", providerID)
	}
}
