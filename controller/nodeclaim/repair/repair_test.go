package repair_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/nodeclaim/nodeclaimtest"
	"github.com/stowage-dev/stowage/controller/nodeclaim/repair"
	"github.com/stowage-dev/stowage/internal/testenv"
)

func TestMain(m *testing.M) { nodeclaimtest.Main(m, testenv.Options{}) }

const settle = 20 * time.Second

// pool creates a pool whose nodes are repaired after repairAfter.
func pool(e *nodeclaimtest.Env, repairAfter string) *v1alpha1.NodePool {
	e.T.Helper()
	np := e.NodePool(nil)
	np.Spec.Disruption.RepairAfter = ptr.To(v1alpha1.MustParseDuration(repairAfter))
	e.Create(np)
	return np
}

// member creates a claim of the pool and its Node, Ready or not since now.
func member(e *nodeclaimtest.Env, np *v1alpha1.NodePool, name string, ready corev1.ConditionStatus) (*v1alpha1.NodeClaim, *corev1.Node) {
	e.T.Helper()
	providerID := "aws:///us-east-1a/i-" + e.ID + name
	claim := e.NodeClaim(name, np)
	e.Create(claim)
	e.UpdateStatus(claim, func() { claim.Status.ProviderID = providerID })
	node := e.Node(name, providerID)
	node.Labels[v1alpha1.LabelNodePool] = np.Name
	e.Create(node)
	setReady(e, node, ready)
	return claim, node
}

func setReady(e *nodeclaimtest.Env, node *corev1.Node, status corev1.ConditionStatus) {
	e.T.Helper()
	e.UpdateStatus(node, func() {
		now := metav1.NewTime(e.Clock.Now())
		node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status, Reason: "Test",
			LastHeartbeatTime: now, LastTransitionTime: now}}
	})
}

func kept(e *nodeclaimtest.Env, claim *v1alpha1.NodeClaim, when string) {
	e.T.Helper()
	if err := e.Get(claim); err != nil || claim.DeletionTimestamp != nil {
		e.T.Fatalf("%s: %v, deleting %v; want claim %s kept", when, err, claim.DeletionTimestamp, claim.Name)
	}
}

// A node whose kubelet went silent (Ready Unknown) has its claim deleted at
// its pool's repairAfter, on the injected clock, and not before; a Ready
// node of the same pool is left alone.
func TestAnUnreachableNodeIsRepairedAfterItsPoolsRepairAfter(t *testing.T) {
	e := nodeclaimtest.New(t)
	np := pool(e, "10m")
	sick, _ := member(e, np, "sick", corev1.ConditionUnknown)
	var healthy []*v1alpha1.NodeClaim
	for i := range 4 {
		claim, _ := member(e, np, fmt.Sprint("healthy", i), corev1.ConditionTrue)
		healthy = append(healthy, claim)
	}
	ctrl := repair.New(e.Clock, e.Mgr.GetClient(), repair.Options{})
	if err := ctrl.Register(e.Mgr); err != nil {
		t.Fatal(err)
	}
	base := nodeclaimtest.CounterValue(t, repair.Repaired.WithLabelValues(np.Name, "unknown"))
	e.Start()
	e.Eventually(settle, func() error {
		if _, ok := ctrl.Alarms().Next(); !ok {
			return fmt.Errorf("no alarm set yet")
		}
		return nil
	})
	e.Clock.Step(9 * time.Minute)
	kept(e, sick, "a minute before repairAfter")
	e.Clock.Step(time.Minute)
	e.Eventually(settle, func() error { return e.Gone(sick) })
	e.ExpectCounter("repaired", repair.Repaired.WithLabelValues(np.Name, "unknown"), base, 1)
	for _, claim := range healthy {
		kept(e, claim, "after the repair")
	}
}

// Of five nodes, one (20%) may be unhealthy and repaired; with two, repair
// holds back (a lost zone, not a bad node) until one is Ready again.
func TestRepairHoldsBackWhileMoreThanAFifthOfThePoolIsUnhealthy(t *testing.T) {
	e := nodeclaimtest.New(t)
	np := pool(e, "5m")
	first, _ := member(e, np, "first", corev1.ConditionFalse)
	second, secondNode := member(e, np, "second", corev1.ConditionUnknown)
	for i := range 3 {
		member(e, np, fmt.Sprint("healthy", i), corev1.ConditionTrue)
	}
	ctrl := repair.New(e.Clock, e.Mgr.GetClient(), repair.Options{})
	if err := ctrl.Register(e.Mgr); err != nil {
		t.Fatal(err)
	}
	blocked := repair.Blocked.WithLabelValues(np.Name)
	base := nodeclaimtest.CounterValue(t, blocked)
	e.Start()
	e.Eventually(settle, func() error {
		if n := ctrl.Alarms().Pending(); n != 2 {
			return fmt.Errorf("%d alarms set, want one per unhealthy node", n)
		}
		return nil
	})
	e.Clock.Step(5 * time.Minute)
	e.Eventually(settle, func() error {
		if n := nodeclaimtest.CounterValue(t, blocked) - base; n != 2 {
			return fmt.Errorf("%v repairs held back, want both, once each", n)
		}
		return nil
	})
	kept(e, first, "two of five unhealthy")
	kept(e, second, "two of five unhealthy")
	setReady(e, secondNode, corev1.ConditionTrue)
	// The recheck must count the pool as the controller's cache sees it.
	e.Eventually(settle, func() error {
		cached := &corev1.Node{}
		if err := e.Mgr.GetClient().Get(e.T.Context(), client.ObjectKeyFromObject(secondNode), cached); err != nil {
			return err
		}
		if len(cached.Status.Conditions) == 0 || cached.Status.Conditions[0].Status != corev1.ConditionTrue {
			return fmt.Errorf("the cache does not show node %s Ready yet", secondNode.Name)
		}
		return nil
	})
	e.Clock.Step(repair.BlockedRecheck)
	e.Eventually(settle, func() error { return e.Gone(first) })
	kept(e, second, "Ready again")
}
