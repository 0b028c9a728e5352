package cas_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/simulate/cas"
)

var (
	compute = group("c6i", "c6i.xlarge", resources("4", "8Gi"), 10)
	general = group("m6i", "m6i.xlarge", resources("4", "16Gi"), 10)
	large   = group("m6i-4x", "m6i.4xlarge", resources("16", "64Gi"), 10)
)

func TestScaleUpChoosesLeastWaste(t *testing.T) {
	tainted := compute
	tainted.Taints = []corev1.Taint{{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule}}
	labelled := large
	labelled.Labels = map[string]string{"tier": "inference"}
	twinA, twinB := general, general
	twinA.Name, twinB.Name = "a-twin", "b-twin"
	cases := []struct {
		name      string
		groups    []cas.NodeGroup
		nodes     []cas.Node
		pending   []*corev1.Pod
		wantGroup string
		wantNodes int
	}{
		{"cpu-shaped pods fill compute nodes exactly", []cas.NodeGroup{compute, general, large}, nil, pods("web", 4, "1", "2Gi"), "c6i", 1},
		{"memory-shaped pods waste less on general nodes", []cas.NodeGroup{compute, general, large}, nil, pods("web", 4, "1", "4Gi"), "m6i", 1},
		{"a tie goes to the first group by name", []cas.NodeGroup{twinB, twinA}, nil, pods("web", 2, "1", "1Gi"), "a-twin", 1},
		{"a group at max size is skipped", []cas.NodeGroup{withMax(compute, 1), general}, []cas.Node{fullNode("c6i-full", withMax(compute, 1))}, pods("web", 4, "1", "2Gi"), "m6i", 1},
		{"a template too small for the pod is skipped", []cas.NodeGroup{compute, general, large}, nil, pods("big", 1, "6", "8Gi"), "m6i-4x", 1},
		{"a taint the pod does not tolerate is skipped", []cas.NodeGroup{tainted, general}, nil, pods("web", 4, "1", "2Gi"), "m6i", 1},
		{"a nodeSelector picks the labelled group", []cas.NodeGroup{compute, general, labelled}, nil, pods("vllm", 1, "1", "2Gi", nodeSelector("tier", "inference")), "m6i-4x", 1},
		{"required node affinity on instance type", []cas.NodeGroup{compute, general}, nil, pods("web", 4, "1", "2Gi", requireIn(corev1.LabelInstanceTypeStable, "m6i.xlarge")), "m6i", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld()
			w.pending, w.nodes = tc.pending, tc.nodes
			a := newAutoscaler(t, w, tc.groups...)
			ups := ofKind(a.RunOnce(t.Context(), w), cas.ActionScaleUp)
			if len(ups) != 1 || ups[0].Group != tc.wantGroup || ups[0].Count != tc.wantNodes {
				t.Fatalf("scale-ups %+v, want one of %d nodes in %s", ups, tc.wantNodes, tc.wantGroup)
			}
		})
	}
}

func withMax(g cas.NodeGroup, maxSize int) cas.NodeGroup {
	g.MaxSize = maxSize
	return g
}

// fullNode is a Ready node of g with no room left.
func fullNode(name string, g cas.NodeGroup) cas.Node {
	n := readyNode(name, g)
	n.Requested = g.Allocatable
	return n
}

func nodeSelector(key, value string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{key: value} }
}

func requireIn(key string, values ...string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}}}}}}}
	}
}

func TestScaleUpBinpacksFirstFitDecreasing(t *testing.T) {
	mixed := append(append(append(pods("a", 2, "3", "1Gi"), pods("b", 2, "2", "1Gi")...), pods("c", 2, "1", "1Gi")...), pods("huge", 1, "64", "1Gi")...)
	cases := []struct {
		name      string
		maxSize   int
		pending   []*corev1.Pod
		wantNodes int
	}{
		{"3,3,2,2,1,1 CPUs pack onto three 4-CPU nodes", 10, mixed, 3},
		{"ten 1-CPU pods need three nodes", 10, pods("web", 10, "1", "1Gi"), 3},
		{"max size caps the estimate", 2, pods("web", 10, "1", "1Gi"), 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld()
			w.pending = tc.pending
			a := newAutoscaler(t, w, withMax(general, tc.maxSize))
			ups := ofKind(a.RunOnce(t.Context(), w), cas.ActionScaleUp)
			if len(ups) != 1 || ups[0].Count != tc.wantNodes {
				t.Fatalf("scale-ups %+v, want %d nodes", ups, tc.wantNodes)
			}
		})
	}
}

func TestNoScaleUpSaysWhy(t *testing.T) {
	cases := []struct {
		name    string
		nodes   []cas.Node
		pending []*corev1.Pod
		want    string
	}{
		{"no group fits", nil, pods("huge", 1, "64", "1Gi"), "no node group fits the pods"},
		{"max size reached", []cas.Node{fullNode("m6i-full", withMax(general, 1))}, pods("web", 1, "1", "1Gi"), "m6i: max size 1 reached"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld()
			w.pending, w.nodes = tc.pending, tc.nodes
			a := newAutoscaler(t, w, withMax(general, 1))
			acts := a.RunOnce(t.Context(), w)
			if len(acts) != 1 || acts[0].Kind != cas.ActionNoScaleUp || acts[0].Reason != tc.want || len(w.launches) != 0 {
				t.Fatalf("actions %+v, launches %v; want one NotTriggerScaleUp %q", acts, w.launches, tc.want)
			}
		})
	}
}

func TestPendingPodsThatFitUpcomingNodesWait(t *testing.T) {
	w := newWorld()
	w.pending = pods("web", 8, "1", "1Gi")
	a := newAutoscaler(t, w, general)
	run(t, a, w, 5*time.Minute)
	if len(w.launches) != 1 || w.launches[0].got != 2 {
		t.Fatalf("launches %+v, want a single launch of 2 nodes while they boot", w.launches)
	}
}

func TestReadyNodesAreLeftToTheScheduler(t *testing.T) {
	w := newWorld()
	w.pending = pods("web", 3, "1", "1Gi")
	w.nodes = []cas.Node{readyNode("m6i-ready", general)}
	a := newAutoscaler(t, w, general)
	a.RunOnce(t.Context(), w)
	if len(w.launches) != 1 || w.launches[0].got != 1 {
		t.Fatalf("launches %+v; want one node: pods World calls unschedulable are, whatever room the model sees", w.launches)
	}
}

func TestASGRetriesShortZoneElsewhere(t *testing.T) {
	w := newWorld()
	w.pending = pods("web", 8, "1", "1Gi")
	w.short["m6i/us-east-1a"] = true
	a := newAutoscaler(t, w, group("m6i", "m6i.xlarge", resources("4", "16Gi"), 10, "us-east-1a", "us-east-1b"))
	acts := a.RunOnce(t.Context(), w)
	var launched int
	for _, up := range ofKind(acts, cas.ActionScaleUp) {
		if up.Zone != "us-east-1b" {
			t.Errorf("launched in %s, want us-east-1b only", up.Zone)
		}
		launched += up.Count
	}
	if launched != 2 || len(ofKind(acts, cas.ActionScaleUpFailed)) != 1 || len(ofKind(acts, cas.ActionBackoff)) != 0 {
		t.Fatalf("actions %+v; want 2 nodes in us-east-1b, one zone failure and no backoff", acts)
	}
}

func TestScaleUpTimesOutUnreadyNodes(t *testing.T) {
	w := newWorld()
	w.pending = pods("web", 1, "1", "1Gi")
	a := newAutoscaler(t, w, general)
	acts := run(t, a, w, 21*time.Minute)
	timeouts, backoffs := ofKind(acts, cas.ActionScaleUpTimedOut), ofKind(acts, cas.ActionBackoff)
	if len(timeouts) != 1 || timeouts[0].At.Sub(t0) != 15*time.Minute+10*time.Second {
		t.Fatalf("timeouts %+v; want one at 15m10s (strictly after max-node-provision-time)", timeouts)
	}
	if len(backoffs) != 1 || backoffs[0].Until.Sub(backoffs[0].At) != 5*time.Minute || !strings.HasPrefix(backoffs[0].Reason, "timeout") {
		t.Fatalf("backoffs %+v; want one of 5m for the timeout", backoffs)
	}
	if len(w.removed) != 1 || len(w.launches) != 2 || w.launches[1].at != 20*time.Minute+10*time.Second {
		t.Fatalf("removed %v, launches %+v; want the node removed and a retry when the backoff ends", w.removed, w.launches)
	}
}

func TestWhatTheModelIgnores(t *testing.T) {
	bound := pod("bound", "1", "1Gi")
	bound.Spec.NodeName = "elsewhere"
	stranger := readyNode("stranger", group("unmanaged", "m6i.large", resources("2", "8Gi"), 1))
	cases := []struct {
		name    string
		pending []*corev1.Pod
		nodes   []cas.Node
	}{
		{"a pending DaemonSet pod", pods("agent", 1, "100m", "128Mi", daemonSetPod), nil},
		{"a pod already bound", []*corev1.Pod{bound}, nil},
		{"an empty node of no known group", nil, []cas.Node{stranger}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld()
			w.pending, w.nodes = tc.pending, tc.nodes
			a := newAutoscaler(t, w, general)
			if acts := run(t, a, w, 11*time.Minute); len(acts) != 0 || len(w.launches) != 0 || len(w.removed) != 0 {
				t.Fatalf("actions %+v, launches %v, removals %v; want none", acts, w.launches, w.removed)
			}
		})
	}
}
