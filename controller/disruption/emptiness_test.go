package disruption_test

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	claimNotInitialized := node("a", "default", 0)
	claimNotInitialized.NodeClaim.Status.Conditions[0].Status = metav1.ConditionUnknown
	unmanaged := node("a", "default", 0)
	unmanaged.NodeClaim = nil
	launching := node("a", "default", 0)
	launching.Node = nil
	nominated := node("a", "default", 0)
	nominated.Nominated = true
	// A pod started an hour ago, protected for two hours, or for half an hour.
	protectedFor := func(d string) *scheduler.StateNode {
		p := annotatedWith(daemonPod("ds"), v1alpha1.AnnotationDoNotDisrupt, d)
		p.Status.StartTime = &metav1.Time{Time: epoch.Add(-time.Hour)}
		return node("a", "default", 0, p)
	}

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
		{name: "a do-not-disrupt duration since the pod started blocks while it lasts",
			node:        protectedFor("2h"),
			wantBlocked: []string{"a: pod default/ds is annotated do-not-disrupt until 2026-11-01T03:00:00Z"}},
		{name: "a do-not-disrupt duration that is over blocks nothing", node: protectedFor("30m"), want: []string{"Empty[a]"}},
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
		{name: "a NodeClaim annotated with Karpenter's do-not-disrupt is blocked",
			node: func() *scheduler.StateNode {
				n := node("a", "default", 0)
				annotated(n.NodeClaim, v1alpha1.AnnotationKarpenterDoNotDisrupt)
				return n
			}(),
			wantBlocked: []string{"a: nodeclaim a is annotated do-not-disrupt"}},
		{name: "a node pending pods are expected on is not empty", node: nominated,
			wantBlocked: []string{"a: pending pods are expected on it"}},
		{name: "the WhenEmpty policy deletes empty nodes", pool: whenEmpty, node: node("a", "default", 0), want: []string{"Empty[a]"}},
		{name: "consolidateAfter Never keeps empty nodes", pool: pool("default", v1alpha1.Never), node: node("a", "default", 0)},
		{name: "a budget of 0 blocks the node", pool: pool("default", "0s", budget("0", "", 0)), node: node("a", "default", 0),
			wantBlocked: []string{"a: the disruption budgets of nodepool default allow no Empty disruption now"}},
		{name: "an empty node that is not Ready is deleted, even with a budget of 0: it already counts as disrupted",
			pool: pool("default", "0s", budget("0", "", 0)), node: notReady(node("a", "default", 0)), want: []string{"Empty[a]"}},
		{name: "a node whose claim is not Initialized is no candidate", node: claimNotInitialized},
		{name: "a node marked for deletion is no candidate", node: marked(node("a", "default", 0))},
		{name: "a node whose pool is gone is no candidate", node: node("a", "gone", 0)},
		{name: "a node without a NodeClaim is not Stowage's", node: unmanaged},
		{name: "a claim without a node is no candidate", node: launching},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.pool == nil {
				tc.pool = pool("default", "0s")
			}
			d := decide(t, disruption.NewEmptiness(), round(epoch, []*v1alpha1.NodePool{tc.pool}, nil, tc.node))
			if got := commanded(d); !slices.Equal(got, tc.want) {
				t.Errorf("commands %q, want %q", got, tc.want)
			}
			if got := blockedNames(d); !slices.Equal(got, tc.wantBlocked) {
				t.Errorf("blocked %q, want %q", got, tc.wantBlocked)
			}
		})
	}
}

// Issue 9: after a large scale-in, a pool's remaining empty nodes had briefly
// gone NotReady; counted as being disrupted, they took the whole of a 100%
// budget, and, no candidates while NotReady, they could not be removed: the
// budget read 0 and they stayed. An empty node that is not Ready is a
// candidate now, and removing it takes no budget.
func TestEmptyNodesThatWentNotReadyAreRemovedWithinAFullBudget(t *testing.T) {
	full := pool("default", "0s", budget("100%", "", 0))
	var sns []*scheduler.StateNode
	for i, n := range nodes(5, "default") {
		if i < 3 {
			sns = append(sns, marked(n)) // being deleted already
		} else {
			sns = append(sns, notReady(n))
		}
	}
	d := decide(t, disruption.NewEmptiness(), round(epoch, []*v1alpha1.NodePool{full}, nil, sns...))
	if got := d.Budgets["default"]; got != 0 {
		t.Errorf("budget %d, want 0: every node is being disrupted or not Ready", got)
	}
	if got, want := commanded(d), []string{"Empty[n03 n04]"}; !slices.Equal(got, want) {
		t.Errorf("commands %q, want %q", got, want)
	}
}

// TestEmptinessWaitsForConsolidateAfter: a node is empty since its last pod
// event as the cluster state saw it; the decision says when the wait ends.
func TestEmptinessWaitsForConsolidateAfter(t *testing.T) {
	pools := []*v1alpha1.NodePool{pool("default", "5m")}
	n := node("a", "default", 0)
	n.LastPodEvent = epoch
	for _, tc := range []struct {
		at   time.Duration
		want []string
	}{{0, nil}, {4*time.Minute + 59*time.Second, nil}, {5 * time.Minute, []string{"Empty[a]"}}} {
		d := decide(t, disruption.NewEmptiness(), round(epoch.Add(tc.at), pools, nil, n))
		if got := commanded(d); !slices.Equal(got, tc.want) {
			t.Fatalf("at %s: commands %q, want %q", tc.at, got, tc.want)
		}
		if len(tc.want) == 0 && !d.WakeAt.Equal(epoch.Add(5*time.Minute)) {
			t.Errorf("at %s: wakes at %v, want when consolidateAfter is over", tc.at, d.WakeAt)
		}
	}
}

// TestEmptinessWaitsFromTheClaimsLastPodEventAfterAFailover: a new leader's
// cluster state has no pod event for a node emptied just before it took
// over; the claim's status.lastPodEventTime, written by the pod events
// controller, still makes the node wait consolidateAfter from that event.
func TestEmptinessWaitsFromTheClaimsLastPodEventAfterAFailover(t *testing.T) {
	pools := []*v1alpha1.NodePool{pool("default", "5m")}
	n := node("a", "default", 0)
	n.NodeClaim.Status.LastPodEventTime = metav1.NewTime(epoch.Add(time.Hour))
	for _, tc := range []struct {
		at   time.Duration
		want []string
	}{{time.Hour + 4*time.Minute, nil}, {time.Hour + 5*time.Minute, []string{"Empty[a]"}}} {
		if got := commanded(decide(t, disruption.NewEmptiness(), round(epoch.Add(tc.at), pools, nil, n))); !slices.Equal(got, tc.want) {
			t.Errorf("at %s: commands %q, want %q", tc.at, got, tc.want)
		}
	}
}

// An empty node in a pool with consolidateAfter Never is not waiting for
// anything: the method's predicate records nothing, and no round is kept
// running for it.
func TestEmptinessNeverWaitsForNever(t *testing.T) {
	d := decide(t, disruption.NewEmptiness(), round(epoch, []*v1alpha1.NodePool{pool("default", v1alpha1.Never)}, nil, node("a", "default", 0)))
	if len(d.Commands) != 0 || len(d.Blocked) != 0 || !d.WakeAt.IsZero() {
		t.Errorf("commands %q, blocked %q, wake at %v; want nothing at all", commanded(d), blockedNames(d), d.WakeAt)
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
		d := decide(t, disruption.NewEmptiness(), round(epoch.Add(time.Hour), pools, nil, shuffled...))
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
			d := decide(t, disruption.NewEmptiness(), round(epoch.Add(tc.readyFor), pools, nil, n))
			if got := commanded(d); !slices.Equal(got, tc.want) || len(d.Blocked) != tc.wantBlocked {
				t.Errorf("Ready for %s: commands %v, blocked %v; want %v and %d blocked", tc.readyFor, got, blockedNames(d), tc.want, tc.wantBlocked)
			}
		})
	}
}
