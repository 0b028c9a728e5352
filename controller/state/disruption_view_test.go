package state_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/state"
	"github.com/stowage-dev/stowage/controller/state/statetest"
)

// nodeNamed returns the snapshot's node of that name, or fails.
func nodeNamed(t *testing.T, c *state.Cluster, name string) *scheduler.StateNode {
	t.Helper()
	for _, sn := range c.Snapshot(nil, nil).Nodes {
		if sn.Name() == name {
			return sn
		}
	}
	t.Fatalf("no node %s in the snapshot", name)
	return nil
}

func TestLastPodEventIsWhenAPodBindsOrLeaves(t *testing.T) {
	clk := clocktesting.NewFakeClock(statetest.Epoch)
	c := state.NewCluster(clk)
	c.UpdateNode(statetest.Node("a", "aws:///z/i-a", "4", "16Gi"))
	if got := nodeNamed(t, c, "a").LastPodEvent; !got.IsZero() {
		t.Fatalf("a node no pod touched has LastPodEvent %v", got)
	}
	web := statetest.Pod("ns", "web", "1", "1Gi")
	clk.Step(time.Minute)
	c.UpdatePod(web) // pending: no node touched
	clk.Step(time.Minute)
	c.UpdatePod(bound(web.DeepCopy(), "a"))
	bindAt := clk.Now()
	clk.Step(time.Minute)
	c.UpdatePod(bound(web.DeepCopy(), "a")) // a status update moves nothing
	if got := nodeNamed(t, c, "a").LastPodEvent; !got.Equal(bindAt) {
		t.Fatalf("after binding and an update LastPodEvent is %v, want the binding at %v", got, bindAt)
	}
	clk.Step(time.Minute)
	done := bound(web.DeepCopy(), "a")
	done.Status.Phase = "Succeeded"
	c.UpdatePod(done)
	if got := nodeNamed(t, c, "a").LastPodEvent; !got.Equal(clk.Now()) {
		t.Fatalf("a pod that finished is an event: LastPodEvent %v, want %v", got, clk.Now())
	}
	other := bound(statetest.Pod("ns", "api", "1", "1Gi"), "a")
	c.UpdatePod(other)
	clk.Step(time.Minute)
	c.DeletePod(other)
	if got := nodeNamed(t, c, "a").LastPodEvent; !got.Equal(clk.Now()) {
		t.Fatalf("a deleted pod is an event: LastPodEvent %v, want %v", got, clk.Now())
	}
}

func TestANodeChosenForPendingPodsIsNominated(t *testing.T) {
	clk := clocktesting.NewFakeClock(statetest.Epoch)
	c := state.NewCluster(clk)
	c.UpdateNodeClaim(claim("default-abcde", ""))
	web := statetest.Unschedulable(statetest.Pod("ns", "web", "1", "1Gi"))
	c.UpdatePod(web)
	if nodeNamed(t, c, "default-abcde").Nominated {
		t.Fatal("a claim no pod is nominated to is Nominated")
	}
	c.Nominate(web, "default-abcde")
	if !nodeNamed(t, c, "default-abcde").Nominated {
		t.Fatal("a claim a pending pod is nominated to is not Nominated")
	}
	// A node Ready for long: the nomination reserves no room after the
	// grace, but the node was chosen for the pod and is not idle.
	ready := statetest.Node("ready", "aws:///z/i-ready", "4", "16Gi")
	ready.Status.Conditions[0].LastTransitionTime = metav1.NewTime(clk.Now())
	c.UpdateNode(ready)
	clk.Step(time.Hour)
	c.Nominate(web, "ready")
	if !nodeNamed(t, c, "ready").Nominated || nodeNamed(t, c, "default-abcde").Nominated {
		t.Fatal("a node Ready for an hour a pending pod was just nominated to is not the one Nominated")
	}
	c.UpdatePod(bound(web.DeepCopy(), "elsewhere"))
	if nodeNamed(t, c, "ready").Nominated {
		t.Fatal("still Nominated after the pod bound elsewhere")
	}
}

// The provisioner nominates the pods of a node being removed to their next
// home; that home stays Nominated while they wait to move, however long the
// drain takes, and is released once they are evicted.
func TestTheNextHomeOfPodsOnARemovedNodeStaysNominated(t *testing.T) {
	clk := clocktesting.NewFakeClock(statetest.Epoch)
	c := state.NewCluster(clk)
	old, next := statetest.Node("old", "aws:///z/i-old", "4", "16Gi"), statetest.Node("next", "aws:///z/i-next", "4", "16Gi")
	next.Status.Conditions[0].LastTransitionTime = metav1.NewTime(clk.Now())
	c.UpdateNode(old)
	c.UpdateNode(next)
	web := bound(statetest.Pod("ns", "web", "1", "1Gi"), "old")
	c.UpdatePod(web)
	c.MarkForDeletion("old")
	c.Nominate(web, "next")
	clk.Step(time.Hour) // far past any nomination grace
	c.UpdatePod(web.DeepCopy())
	if !nodeNamed(t, c, "next").Nominated {
		t.Fatal("the next home of a pod waiting on a removed node is not Nominated")
	}
	// Its room there is counted, so that the provisioner does not plan it again.
	if !c.HasNextHome(web) || len(nodeNamed(t, c, "next").Pods) != 1 {
		t.Fatalf("next home known %v with %d pods, want known and the pod counted there", c.HasNextHome(web), len(nodeNamed(t, c, "next").Pods))
	}
	evicted := web.DeepCopy()
	evicted.DeletionTimestamp = &metav1.Time{Time: clk.Now()}
	c.UpdatePod(evicted)
	if nodeNamed(t, c, "next").Nominated || c.HasNextHome(evicted) {
		t.Fatal("still Nominated after the pod was evicted")
	}
}

// A pod kube-scheduler found no node for, and that no node or claim is
// expected to take, is unprovided; nominated, bound or deleting, it is not.
func TestUnprovidedPods(t *testing.T) {
	clk := clocktesting.NewFakeClock(statetest.Epoch)
	c := state.NewCluster(clk)
	if c.Unprovided() {
		t.Fatal("an empty cluster has a pod waiting")
	}
	web := statetest.Unschedulable(statetest.Pod("ns", "web", "1", "1Gi"))
	c.UpdatePod(statetest.Pod("ns", "fresh", "1", "1Gi")) // not yet looked at by kube-scheduler
	c.UpdatePod(web)
	if !c.Unprovided() {
		t.Fatal("an unschedulable pod is not waiting")
	}
	c.UpdateNodeClaim(claim("default-abcde", ""))
	c.Nominate(web, "default-abcde")
	if c.Unprovided() {
		t.Fatal("a pod nominated to a claim still launching is waiting")
	}
	c.UpdatePod(bound(web.DeepCopy(), "somewhere"))
	if c.Unprovided() {
		t.Fatal("a bound pod is waiting")
	}
}
