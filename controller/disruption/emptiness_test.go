package disruption_test

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/disruption"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/state"
)

func TestEmptiness(t *testing.T) {
	deleting := pod("leaving")
	deleting.DeletionTimestamp = &metav1.Time{Time: epoch}
	whenEmpty := pool("default", "0s")
	whenEmpty.Spec.Disruption.ConsolidationPolicy = v1alpha1.ConsolidationPolicyWhenEmpty
	claimNotReady := node("a", "default", 0)
	claimNotReady.NodeClaim.Status.Conditions[0].Status = metav1.ConditionUnknown
	unmanaged := node("a", "default", 0)
	unmanaged.NodeClaim = nil
	launching := node("a", "default", 0)
	launching.Node = nil

	for _, tc := range []struct {
		name        string
		pool        *v1alpha1.NodePool
		node        *scheduler.StateNode
		want        []string
		wantBlocked []string
	}{
		{name: "a node running only DaemonSet, mirror and finished pods is empty",
			node: node("a", "default", 0, daemonPod("ds"), mirrorPod("static"), finishedPod("job")),
			want: []string{"Empty[a]"}},
		{name: "a node running a pod is not empty", node: node("a", "default", 0, daemonPod("ds"), pod("web"))},
		{name: "a pod being deleted leaves the node empty", node: node("a", "default", 0, deleting), want: []string{"Empty[a]"}},
		{name: "a do-not-disrupt pod blocks the node",
			node:        node("a", "default", 0, annotated(daemonPod("ds"), v1alpha1.AnnotationDoNotDisrupt)),
			wantBlocked: []string{"a: pod default/ds is annotated do-not-disrupt"}},
		{name: "Karpenter's do-not-disrupt annotation blocks the node too",
			node:        node("a", "default", 0, annotated(mirrorPod("static"), v1alpha1.AnnotationKarpenterDoNotDisrupt)),
			wantBlocked: []string{"a: pod default/static is annotated do-not-disrupt"}},
		{name: "a finished do-not-disrupt pod does not block",
			node: node("a", "default", 0, annotated(finishedPod("job"), v1alpha1.AnnotationDoNotDisrupt)),
			want: []string{"Empty[a]"}},
		{name: "a node annotated do-not-disrupt is blocked",
			node: func() *scheduler.StateNode {
				n := node("a", "default", 0)
				annotated(n.Node, v1alpha1.AnnotationDoNotDisrupt)
				return n
			}(),
			wantBlocked: []string{"a: node a is annotated do-not-disrupt"}},
		{name: "the WhenEmpty policy deletes empty nodes", pool: whenEmpty, node: node("a", "default", 0), want: []string{"Empty[a]"}},
		{name: "consolidateAfter Never keeps empty nodes", pool: pool("default", v1alpha1.Never), node: node("a", "default", 0)},
		{name: "a budget of 0 blocks the node", pool: pool("default", "0s", budget("0", "", 0)), node: node("a", "default", 0),
			wantBlocked: []string{"a: the disruption budgets of nodepool default allow no Empty disruption now"}},
		{name: "a node that is not Ready is no candidate", node: notReady(node("a", "default", 0))},
		{name: "a node whose claim is not Ready is no candidate", node: claimNotReady},
		{name: "a node marked for deletion is no candidate", node: marked(node("a", "default", 0))},
		{name: "a node whose pool is gone is no candidate", node: node("a", "gone", 0)},
		{name: "a node without a NodeClaim is not Stowage's", node: unmanaged},
		{name: "a claim without a node is no candidate", node: launching},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.pool == nil {
				tc.pool = pool("default", "0s")
			}
			snap := &scheduler.Snapshot{Nodes: []*scheduler.StateNode{tc.node}, NodePools: []*v1alpha1.NodePool{tc.pool}}
			m := disruption.NewEmptiness(clocktesting.NewFakePassiveClock(epoch))
			d, err := disruption.Decide(t.Context(), m, snap, epoch)
			fatalIf(t, err)
			if got := commanded(d); !slices.Equal(got, tc.want) {
				t.Errorf("commands %q, want %q", got, tc.want)
			}
			if got := blockedNames(d); !slices.Equal(got, tc.wantBlocked) {
				t.Errorf("blocked %q, want %q", got, tc.wantBlocked)
			}
		})
	}
}

// TestEmptinessWaitsForConsolidateAfter steps a node through a pod landing
// and leaving: the wait starts again from the first round that finds it
// empty after the pod has gone.
func TestEmptinessWaitsForConsolidateAfter(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	m := disruption.NewEmptiness(clk)
	pools := []*v1alpha1.NodePool{pool("default", "5m")}
	round := func(pods ...*scheduler.StateNode) []string {
		t.Helper()
		d, err := disruption.Decide(t.Context(), m, &scheduler.Snapshot{Nodes: pods, NodePools: pools}, clk.Now())
		fatalIf(t, err)
		return commanded(d)
	}
	for _, step := range []struct {
		after time.Duration
		node  *scheduler.StateNode
		want  []string
	}{
		{0, node("a", "default", 0), nil},                            // empty since 0
		{4 * time.Minute, node("a", "default", 0), nil},              // 4m
		{30 * time.Second, node("a", "default", 0, pod("web")), nil}, // a pod lands: reset
		{time.Minute, node("a", "default", 0), nil},                  // empty again since 5m30s
		{4 * time.Minute, node("a", "default", 0), nil},              // 4m
		{59 * time.Second, node("a", "default", 0), nil},             // 4m59s
		{time.Second, node("a", "default", 0), []string{"Empty[a]"}}, // 5m
	} {
		clk.Step(step.after)
		if got := round(step.node); !slices.Equal(got, step.want) {
			t.Fatalf("at %s: commands %q, want %q", clk.Since(epoch), got, step.want)
		}
	}
}

// TestEmptinessForgetsNodesItWasNotAskedAbout: a node that stops being a
// candidate (here it went NotReady) starts its wait again when it comes back.
func TestEmptinessForgetsNodesItWasNotAskedAbout(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	m := disruption.NewEmptiness(clk)
	pools := []*v1alpha1.NodePool{pool("default", "5m")}
	for _, step := range []struct {
		after time.Duration
		node  *scheduler.StateNode
		want  []string
	}{
		{0, node("a", "default", 0), nil},
		{4 * time.Minute, notReady(node("a", "default", 0)), nil},
		{2 * time.Minute, node("a", "default", 0), nil},
		{5 * time.Minute, node("a", "default", 0), []string{"Empty[a]"}},
	} {
		clk.Step(step.after)
		d, err := disruption.Decide(t.Context(), m, &scheduler.Snapshot{Nodes: []*scheduler.StateNode{step.node}, NodePools: pools}, clk.Now())
		fatalIf(t, err)
		if got := commanded(d); !slices.Equal(got, step.want) {
			t.Fatalf("at %s: commands %q, want %q", clk.Since(epoch), got, step.want)
		}
	}
}

// TestEmptinessOrder: whatever order the snapshot lists them in, the
// oldest claims go first, ties broken by name, pool by pool within budget.
func TestEmptinessOrder(t *testing.T) {
	pools := []*v1alpha1.NodePool{pool("a", "0s", budget("3", "", 0)), pool("b", "0s", budget("1", "", 0))}
	all := []*scheduler.StateNode{
		node("young", "a", 5*time.Minute), node("old-2", "a", 0), node("old-1", "a", 0),
		node("mid", "a", 2*time.Minute), node("b-old", "b", 0), node("b-young", "b", time.Minute),
	}
	want := []string{"Empty[b-old old-1 old-2 mid]"}
	wantBlocked := []string{
		"b-young: the disruption budgets of nodepool b allow 1 Empty disruptions now, all taken",
		"young: the disruption budgets of nodepool a allow 3 Empty disruptions now, all taken",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20 {
		shuffled := slices.Clone(all)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		m := disruption.NewEmptiness(clocktesting.NewFakePassiveClock(epoch))
		d, err := disruption.Decide(t.Context(), m, &scheduler.Snapshot{Nodes: shuffled, NodePools: pools}, epoch)
		fatalIf(t, err)
		if got := commanded(d); !slices.Equal(got, want) {
			t.Fatalf("shuffle %d: commands %q, want %q", i, got, want)
		}
		if got := blockedNames(d); !slices.Equal(got, wantBlocked) {
			t.Fatalf("shuffle %d: blocked %q, want %q", i, got, wantBlocked)
		}
	}
}

func TestANodeJustReadyIsNotDisruptedWhileItsPodsBind(t *testing.T) {
	pools := []*v1alpha1.NodePool{pool("default", "0s")}
	for _, tc := range []struct {
		readyFor    time.Duration
		want        []string
		wantBlocked int
	}{
		{readyFor: state.NominationGrace - time.Second, wantBlocked: 1},
		{readyFor: state.NominationGrace, want: []string{"Empty[a]"}},
	} {
		t.Run(tc.readyFor.String(), func(t *testing.T) {
			n := node("a", "default", 0)
			n.Node.Status.Conditions[0].LastTransitionTime = metav1.NewTime(epoch)
			m := disruption.NewEmptiness(clocktesting.NewFakeClock(epoch))
			d, err := disruption.Decide(t.Context(), m, &scheduler.Snapshot{Nodes: []*scheduler.StateNode{n}, NodePools: pools}, epoch.Add(tc.readyFor))
			fatalIf(t, err)
			if got := commanded(d); !slices.Equal(got, tc.want) || len(d.Blocked) != tc.wantBlocked {
				t.Errorf("Ready for %s: commands %v, blocked %v; want %v and %d blocked", tc.readyFor, got, blockedNames(d), tc.want, tc.wantBlocked)
			}
		})
	}
}
