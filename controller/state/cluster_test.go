package state_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/state"
	"github.com/stowage-dev/stowage/controller/state/statetest"
)

func TestMain(m *testing.M) { os.Exit(statetest.Run(m)) }

func claim(name, providerID string) *v1alpha1.NodeClaim {
	nc := &v1alpha1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1alpha1.LabelNodePool: "default"}}}
	nc.Status.ProviderID = providerID
	return nc
}

func bound(pod *corev1.Pod, node string) *corev1.Pod {
	pod.Spec.NodeName = node
	return pod
}

// names renders a snapshot's nodes as "name[pod,pod]" for comparison.
func names(s *scheduler.Snapshot) []string {
	var out []string
	for _, n := range s.Nodes {
		var pods []string
		for _, p := range n.Pods {
			pods = append(pods, p.Name)
		}
		out = append(out, fmt.Sprintf("%s%v", n.Name(), pods))
	}
	return out
}

func expectNodes(t *testing.T, s *scheduler.Snapshot, want ...string) {
	t.Helper()
	if got := names(s); !slices.Equal(got, want) {
		t.Fatalf("snapshot nodes %q, want %q", got, want)
	}
}

func TestClaimJoinsItsNodeByProviderID(t *testing.T) {
	c := state.NewCluster(clocktesting.NewFakeClock(statetest.Epoch))
	c.UpdateNodeClaim(claim("default-abcde", ""))
	expectNodes(t, c.Snapshot(nil, nil), "default-abcde[]")

	c.UpdateNodeClaim(claim("default-abcde", "aws:///us-east-1a/i-1"))
	c.UpdateNode(statetest.Node("ip-10-0-0-1", "aws:///us-east-1a/i-1", "4", "16Gi"))
	s := c.Snapshot(nil, nil)
	expectNodes(t, s, "ip-10-0-0-1[]")
	if s.Nodes[0].NodeClaim == nil || s.Nodes[0].Node == nil {
		t.Fatalf("node and claim not joined: %+v", s.Nodes[0])
	}

	c.DeleteNode(statetest.Node("ip-10-0-0-1", "", "4", "16Gi"))
	expectNodes(t, c.Snapshot(nil, nil), "default-abcde[]")
	c.DeleteNodeClaim(claim("default-abcde", ""))
	expectNodes(t, c.Snapshot(nil, nil))
}

func TestNominatedPodsCountOnTheirClaimUntilBound(t *testing.T) {
	c := state.NewCluster(clocktesting.NewFakeClock(statetest.Epoch))
	c.UpdateNodeClaim(claim("default-abcde", ""))
	web := statetest.Unschedulable(statetest.Pod("ns", "web", "1", "1Gi"))
	c.UpdatePod(web)
	c.Nominate(web, "default-abcde")
	if !c.IsNominated(web) {
		t.Fatal("pod not nominated")
	}
	expectNodes(t, c.Snapshot(nil, nil), "default-abcde[web]")

	c.UpdateNodeClaim(claim("default-abcde", "aws:///us-east-1a/i-1"))
	c.UpdateNode(statetest.Node("ip-10-0-0-1", "aws:///us-east-1a/i-1", "4", "16Gi"))
	expectNodes(t, c.Snapshot(nil, nil), "ip-10-0-0-1[web]")

	c.UpdatePod(bound(web.DeepCopy(), "ip-10-0-0-1"))
	if c.IsNominated(web) {
		t.Fatal("bound pod still nominated")
	}
	expectNodes(t, c.Snapshot(nil, nil), "ip-10-0-0-1[web]")
}

func TestDeletingAClaimDropsItsNominations(t *testing.T) {
	c := state.NewCluster(clocktesting.NewFakeClock(statetest.Epoch))
	nc := claim("default-abcde", "")
	c.UpdateNodeClaim(nc)
	web := statetest.Unschedulable(statetest.Pod("ns", "web", "1", "1Gi"))
	c.UpdatePod(web)
	c.Nominate(web, nc.Name)
	c.DeleteNodeClaim(nc)
	if c.IsNominated(web) {
		t.Fatal("pod still nominated to a deleted claim")
	}
	if got := c.PendingPods(); len(got) != 1 || got[0].Name != "web" {
		t.Fatalf("pending pods %v, want web", got)
	}
}

func TestSyncedWaitsForCreatedClaims(t *testing.T) {
	clk := clocktesting.NewFakeClock(statetest.Epoch)
	c := state.NewCluster(clk)
	ctx := context.Background()
	c.NodeClaimCreated(claim("default-abcde", ""))
	c.NodeClaimCreated(claim("default-fghij", ""))
	if c.Synced(ctx) {
		t.Fatal("synced before the feeders saw the created claims")
	}
	expectNodes(t, c.Snapshot(nil, nil), "default-abcde[]", "default-fghij[]")
	c.UpdateNodeClaim(claim("default-abcde", ""))
	if c.Synced(ctx) {
		t.Fatal("synced with one created claim unseen")
	}
	clk.Step(state.DefaultCreatedClaimTimeout)
	if !c.Synced(ctx) {
		t.Fatal("still waiting on a claim the feeders never saw after the timeout")
	}

	var informerSynced bool
	c.AddSyncCheck(func() bool { return informerSynced })
	if c.Synced(ctx) {
		t.Fatal("synced before the informers")
	}
	informerSynced = true
	if !c.Synced(ctx) {
		t.Fatal("not synced once the informers are")
	}
}

// A claim the informer has already delivered launched and joined to its
// Node keeps that state when the provisioner records the copy its Create
// returned, which has no provider id: a batch creating hundreds of claims
// records them after the first have launched and registered (the bed's
// 1,000-node step). Taking the stale copy split the claim from its Node,
// and pods were nominated to an empty "launching" claim that never came.
func TestACreatedClaimRecordedLateKeepsWhatTheInformerSaw(t *testing.T) {
	c := state.NewCluster(clocktesting.NewFakeClock(statetest.Epoch))
	c.UpdateNodeClaim(claim("default-abcde", "aws:///us-east-1a/i-1"))
	c.UpdateNode(statetest.Node("ip-10-0-0-1", "aws:///us-east-1a/i-1", "4", "16Gi"))
	c.UpdatePod(bound(statetest.Pod("ns", "web", "1", "1Gi"), "ip-10-0-0-1"))

	c.NodeClaimCreated(claim("default-abcde", ""))
	s := c.Snapshot(nil, nil)
	expectNodes(t, s, "ip-10-0-0-1[web]")
	if s.Nodes[0].NodeClaim == nil || s.Nodes[0].NodeClaim.Status.ProviderID == "" {
		t.Fatalf("the claim lost what the informer saw: %+v", s.Nodes[0].NodeClaim)
	}
	if !c.Synced(context.Background()) {
		t.Fatal("waiting for the informer to see a claim it has already delivered")
	}

	// One that failed and went before it was recorded stays gone.
	c.UpdateNodeClaim(claim("default-fghij", "aws:///us-east-1a/i-2"))
	c.DeleteNodeClaim(claim("default-fghij", "aws:///us-east-1a/i-2"))
	c.NodeClaimCreated(claim("default-fghij", ""))
	expectNodes(t, c.Snapshot(nil, nil), "ip-10-0-0-1[web]")
}

func TestMarkedNodesAreMarkedInTheSnapshot(t *testing.T) {
	c := state.NewCluster(clocktesting.NewFakeClock(statetest.Epoch))
	c.UpdateNode(statetest.Node("a", "aws:///us-east-1a/i-1", "4", "16Gi"))
	c.UpdateNodeClaim(claim("default-abcde", ""))
	c.MarkForDeletion("a", "default-abcde")
	for _, n := range c.Snapshot(nil, nil).Nodes {
		if !n.MarkedForDeletion {
			t.Fatalf("%s not marked for deletion", n.Name())
		}
	}
	c.UnmarkForDeletion("a")
	if s := c.Snapshot(nil, nil); s.Nodes[0].MarkedForDeletion {
		t.Fatalf("%s still marked", s.Nodes[0].Name())
	}
}

func TestSnapshotIsSorted(t *testing.T) {
	c := state.NewCluster(clocktesting.NewFakeClock(statetest.Epoch))
	for _, name := range []string{"c", "a", "b"} {
		c.UpdateNode(statetest.Node(name, "aws:///us-east-1a/i-"+name, "4", "16Gi"))
		c.UpdatePod(bound(statetest.Pod("ns", "p-"+name, "1", "1Gi"), "a"))
		c.UpdateNodePool(statetest.NodePool("pool-"+name, "default"))
	}
	types := catalogue.InstanceTypes(catalogue.Builtin()[:5], catalogue.DefaultOptions())
	slices.Reverse(types)
	pending := []*corev1.Pod{statetest.Pod("ns", "z", "1", "1Gi"), statetest.Pod("ns", "y", "1", "1Gi")}
	s := c.Snapshot(pending, map[string][]*cloudprovider.InstanceType{"pool-a": types})
	expectNodes(t, s, "a[p-a p-b p-c]", "b[]", "c[]")
	if pending[0].Name != "z" {
		t.Fatal("Snapshot sorted the caller's slice")
	}
	if s.Pods[0].Name != "y" || s.NodePools[0].Name != "pool-a" || s.NodePools[2].Name != "pool-c" {
		t.Fatalf("pods or pools not sorted: %s, %s", s.Pods[0].Name, s.NodePools[0].Name)
	}
	got := s.InstanceTypes["pool-a"]
	if !slices.IsSortedFunc(got, func(a, b *cloudprovider.InstanceType) int { return strings.Compare(a.Name, b.Name) }) {
		t.Fatal("instance types not sorted by name")
	}
}

func TestFinishedAndDeletingPodsAreNotPending(t *testing.T) {
	c := state.NewCluster(clocktesting.NewFakeClock(statetest.Epoch))
	done := statetest.Pod("ns", "done", "1", "1Gi")
	done.Status.Phase = corev1.PodSucceeded
	going := statetest.Pod("ns", "going", "1", "1Gi")
	going.DeletionTimestamp = &metav1.Time{Time: statetest.Epoch}
	c.UpdatePod(done)
	c.UpdatePod(going)
	c.UpdatePod(statetest.Pod("ns", "waiting", "1", "1Gi"))
	if got := c.PendingPods(); len(got) != 1 || got[0].Name != "waiting" {
		t.Fatalf("pending %v, want only waiting", got)
	}
}

// TestClusterFollowsTheAPIServer feeds the state from a real API server and
// checks that its Snapshot shows what was created there.
func TestClusterFollowsTheAPIServer(t *testing.T) {
	e := statetest.Start(t)
	e.Create(t, statetest.NodeClass("default"), statetest.NodePool("default", "default"))
	registered := claim("default-abcde", "aws:///us-east-1a/i-1")
	registered.Spec.NodeClassRef = &v1alpha1.NodeClassReference{Group: v1alpha1.Group, Kind: "NodeClass", Name: "default"}
	inflight := registered.DeepCopy()
	inflight.Name, inflight.Status.ProviderID = "default-fghij", ""
	e.Create(t, registered, inflight, statetest.Node("ip-10-0-0-1", "aws:///us-east-1a/i-1", "4", "16Gi"))
	e.Create(t, bound(statetest.Pod(e.Namespace, "web", "1", "1Gi"), "ip-10-0-0-1"),
		statetest.Unschedulable(statetest.Pod(e.Namespace, "batch", "2", "1Gi")))

	statetest.Eventually(t, 10*time.Second, func() error {
		s := e.Cluster.Snapshot(e.Cluster.PendingPods(), nil)
		got := fmt.Sprint(names(s), len(s.NodePools), len(s.NodeClasses), len(s.Pods))
		if want := "[default-fghij[] ip-10-0-0-1[web]] 1 1 1"; got != want {
			return fmt.Errorf("snapshot %s, want %s", got, want)
		}
		if s.Nodes[1].NodeClaim == nil || s.Nodes[1].NodeClaim.Name != "default-abcde" {
			return fmt.Errorf("node not joined to its claim: %+v", s.Nodes[1])
		}
		return nil
	})
	if !e.Cluster.Synced(t.Context()) {
		t.Fatal("not synced")
	}
}

// TestSyncedWaitsForTheInformerToSeeACreatedClaim records a claim as created
// before the API server has it, and checks Synced turns true once the
// informer sees it.
func TestSyncedWaitsForTheInformerToSeeACreatedClaim(t *testing.T) {
	e := statetest.Start(t)
	nc := claim("default-abcde", "")
	nc.Spec.NodeClassRef = &v1alpha1.NodeClassReference{Group: v1alpha1.Group, Kind: "NodeClass", Name: "default"}
	nc.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	e.Cluster.NodeClaimCreated(nc)
	if e.Cluster.Synced(t.Context()) {
		t.Fatal("synced before the claim exists")
	}
	e.Create(t, nc)
	statetest.Eventually(t, 10*time.Second, func() error {
		if !e.Cluster.Synced(t.Context()) {
			return fmt.Errorf("not synced")
		}
		return nil
	})
}

func TestNominationExpiresOnceTheNodeHasBeenReady(t *testing.T) {
	clk := clocktesting.NewFakeClock(statetest.Epoch)
	c := state.NewCluster(clk)
	c.UpdateNodeClaim(claim("default-abcde", "aws:///us-east-1a/i-1"))
	web := statetest.Unschedulable(statetest.Pod("ns", "web", "1", "1Gi"))
	c.UpdatePod(web)
	c.Nominate(web, "default-abcde")
	node := statetest.Node("ip-10-0-0-1", "aws:///us-east-1a/i-1", "4", "16Gi")
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(clk.Now())}}
	c.UpdateNode(node)
	clk.Step(state.NominationGrace - time.Second)
	if !c.IsNominated(web) {
		t.Fatal("nomination expired before kube-scheduler had its grace period")
	}
	expectNodes(t, c.Snapshot(nil, nil), "ip-10-0-0-1[web]")
	clk.Step(time.Second)
	if c.IsNominated(web) {
		t.Fatal("pod still nominated to a node that has been Ready for the whole grace period")
	}
	expectNodes(t, c.Snapshot(nil, nil), "ip-10-0-0-1[]")
}
