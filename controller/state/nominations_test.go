package state_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/state"
	"github.com/stowage-dev/stowage/controller/state/statetest"
)

// readyNode is a node Ready since at, joined to claim default-abcde.
func readyNode(c *state.Cluster, at time.Time) *corev1.Node {
	node := statetest.Node("ip-10-0-0-1", "aws:///us-east-1a/i-1", "4", "16Gi")
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(at)}}
	c.UpdateNode(node)
	return node
}

func initialized(nc *v1alpha1.NodeClaim) *v1alpha1.NodeClaim {
	nc.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionInitialized, Status: metav1.ConditionTrue}}
	return nc
}

func only(t *testing.T, s *scheduler.Snapshot) *scheduler.StateNode {
	t.Helper()
	if len(s.Nodes) != 1 {
		t.Fatalf("snapshot has %d nodes, want 1", len(s.Nodes))
	}
	return s.Nodes[0]
}

// TestNominationToALongReadyNodeLastsTheGraceFromItsMaking is the bug of
// issue 9: a pod nominated to a node Ready for more than the grace period
// lapsed the moment it was made, so emptiness saw the node empty and deleted
// it under the pod.
func TestNominationToALongReadyNodeLastsTheGraceFromItsMaking(t *testing.T) {
	clk := clocktesting.NewFakeClock(statetest.Epoch)
	c := state.NewCluster(clk)
	c.UpdateNodeClaim(initialized(claim("default-abcde", "aws:///us-east-1a/i-1")))
	readyNode(c, clk.Now())
	clk.Step(time.Minute)
	web := statetest.Unschedulable(statetest.Pod("ns", "web", "1", "1Gi"))
	c.UpdatePod(web)
	c.Nominate(web, "ip-10-0-0-1")
	if !c.IsNominated(web) {
		t.Fatal("a fresh nomination to a node Ready for a minute has already lapsed")
	}
	if sn := only(t, c.Snapshot(nil, nil)); !sn.Nominated || len(sn.Pods) != 1 {
		t.Fatalf("node nominated=%v with %d pods, want nominated with the pod", sn.Nominated, len(sn.Pods))
	}
	clk.Step(state.NominationGrace)
	if c.IsNominated(web) {
		t.Fatal("the nomination outlived its grace period")
	}
	sn := only(t, c.Snapshot(nil, nil))
	if !sn.Nominated || len(sn.Pods) != 0 {
		t.Fatalf("just after the lapse: nominated=%v with %d pods, want nominated (until re-planned) with no pod", sn.Nominated, len(sn.Pods))
	}
	clk.Step(state.NominationGrace)
	if only(t, c.Snapshot(nil, nil)).Nominated {
		t.Fatal("the node is still nominated a grace period after the lapse")
	}
}

// TestLapseNominationsReturnsThePodsToPlanAgain: the lapsed pods come back
// once, with when the next lapse is due, and the generation moves so that
// disruption looks again.
func TestLapseNominationsReturnsThePodsToPlanAgain(t *testing.T) {
	clk := clocktesting.NewFakeClock(statetest.Epoch)
	c := state.NewCluster(clk)
	c.UpdateNodeClaim(initialized(claim("default-abcde", "aws:///us-east-1a/i-1")))
	readyNode(c, clk.Now())
	web, api := statetest.Unschedulable(statetest.Pod("ns", "web", "1", "1Gi")), statetest.Unschedulable(statetest.Pod("ns", "api", "1", "1Gi"))
	c.UpdatePod(web)
	c.UpdatePod(api)
	c.Nominate(web, "default-abcde")
	clk.Step(3 * time.Second)
	c.Nominate(api, "ip-10-0-0-1")

	lapsed, next := c.LapseNominations()
	if len(lapsed) != 0 || !next.Equal(statetest.Epoch.Add(state.NominationGrace)) {
		t.Fatalf("before any lapse: %d lapsed, next %s; want none, next at the grace", len(lapsed), next)
	}
	clk.SetTime(next)
	gen := c.Generation()
	lapsed, next = c.LapseNominations()
	if len(lapsed) != 1 || lapsed[0].Name != "web" {
		t.Fatalf("lapsed %v, want web", lapsed)
	}
	if want := statetest.Epoch.Add(3*time.Second + state.NominationGrace); !next.Equal(want) {
		t.Errorf("next lapse %s, want api's at %s", next, want)
	}
	if c.Generation() == gen {
		t.Error("a lapse left the generation unchanged: disruption would not look again")
	}
	if lapsed, _ = c.LapseNominations(); len(lapsed) != 0 {
		t.Errorf("web lapsed twice: %v", lapsed)
	}
	if !c.IsNominated(api) || c.IsNominated(web) {
		t.Error("want api still nominated and web not")
	}
}

// TestNominationHoldsWhileTheNodeBootsAndLapsesWhenAnUpNodeGoesNotReady: a
// node coming up is NotReady and will take the pod; a node that was up and
// went NotReady takes nothing, so its nominations lapse at once.
func TestNominationHoldsWhileTheNodeBootsAndLapsesWhenAnUpNodeGoesNotReady(t *testing.T) {
	clk := clocktesting.NewFakeClock(statetest.Epoch)
	c := state.NewCluster(clk)
	nc := claim("default-abcde", "aws:///us-east-1a/i-1")
	c.UpdateNodeClaim(nc)
	node := statetest.Node("ip-10-0-0-1", "aws:///us-east-1a/i-1", "4", "16Gi")
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse}}
	c.UpdateNode(node)
	web := statetest.Unschedulable(statetest.Pod("ns", "web", "1", "1Gi"))
	c.UpdatePod(web)
	c.Nominate(web, nc.Name)
	clk.Step(time.Hour)
	if !c.IsNominated(web) {
		t.Fatal("the nomination to a node still booting lapsed")
	}
	c.UpdateNodeClaim(initialized(nc.DeepCopy()))
	if c.IsNominated(web) {
		t.Fatal("the nomination to an initialized node that is NotReady holds")
	}
	if lapsed, _ := c.LapseNominations(); len(lapsed) != 1 {
		t.Fatalf("lapsed %v, want web", lapsed)
	}
}

func TestNominationToAClaimBeingDeletedLapses(t *testing.T) {
	clk := clocktesting.NewFakeClock(statetest.Epoch)
	c := state.NewCluster(clk)
	nc := claim("default-abcde", "")
	c.UpdateNodeClaim(nc)
	web := statetest.Unschedulable(statetest.Pod("ns", "web", "1", "1Gi"))
	c.UpdatePod(web)
	c.Nominate(web, nc.Name)
	deleting := nc.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: clk.Now()}
	c.UpdateNodeClaim(deleting)
	if c.IsNominated(web) {
		t.Fatal("the pod is still nominated to a claim being deleted")
	}
}
