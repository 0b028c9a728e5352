package disruption_test

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/disruption"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler/schedulertest"
)

var (
	singleNode = disruption.NewSingleNode(disruption.ConsolidationOptions{})
	multiNode  = disruption.NewMultiNode(disruption.ConsolidationOptions{})
)

func pools(ps ...*v1alpha1.NodePool) []*v1alpha1.NodePool { return ps }

// onDemand is a pool of on-demand capacity only, with a budget of 100%, so
// that on-demand nodes are not consolidated onto spot.
func onDemand(name string) *v1alpha1.NodePool {
	p := pool(name, "0s", budget("100%", "", 0))
	p.Spec.Template.Spec.Requirements = []v1alpha1.NodeSelectorRequirementWithMinValues{{Key: v1alpha1.LabelCapacityType,
		Operator: v1alpha1.OperatorIn, Values: []string{v1alpha1.CapacityTypeOnDemand}}}
	return p
}

// pinned is a pod no node or instance type can take.
func pinned(name string) *corev1.Pod {
	p := sized(name, "1", "1Gi")
	p.Spec.NodeSelector = map[string]string{"example.com/rack": "r9"}
	return p
}

func TestSingleNodeConsolidation(t *testing.T) {
	full := onDemand("default")
	for _, tc := range []struct {
		name        string
		types       []*cloudprovider.InstanceType
		nodes       []*scheduler.StateNode
		want        []string
		wantBlocked []string
	}{
		{name: "a node whose pods fit on another is deleted, the cheapest to disrupt first",
			nodes: []*scheduler.StateNode{node("a", "default", 0, sized("w1", "1", "1Gi"), sized("w2", "1", "1Gi")),
				node("b", "default", 0, sized("w3", "1", "1Gi"))},
			want: []string{"Underutilized[b]"}},
		{name: "a node whose pods need less is replaced by a cheaper one",
			nodes: []*scheduler.StateNode{node("a", "default", 0, sized("w1", "1500m", "4Gi"))},
			want:  []string{"Underutilized[a]+small"}},
		{name: "a node as small as its pods allow stays",
			nodes: []*scheduler.StateNode{node("a", "default", 0, sized("w1", "3", "4Gi"))}},
		{name: "a replacement saving less than 15% is not made",
			types: append(catalogue(), priced("medium-bis", 4, 0.36)),
			nodes: []*scheduler.StateNode{node("a", "default", 0, sized("w1", "3", "4Gi"))}},
		{name: "a replacement saving 15% or more is made",
			types: append(catalogue(), priced("medium-bis", 4, 0.33)),
			nodes: []*scheduler.StateNode{node("a", "default", 0, sized("w1", "3", "4Gi"))},
			want:  []string{"Underutilized[a]+medium-bis"}},
		{name: "a node never goes back to an instance type it replaced",
			nodes: []*scheduler.StateNode{replacing(node("a", "default", 0, sized("w1", "1500m", "4Gi")), "small")}},
		{name: "a pod that fits nowhere blocks its node",
			nodes:       []*scheduler.StateNode{node("a", "default", 0, pinned("pinned"))},
			wantBlocked: []string{"a: unschedulable"}},
		{name: "a PodDisruptionBudget allowing no disruption blocks the node",
			nodes:       []*scheduler.StateNode{node("a", "default", 0, sized("guarded", "1500m", "4Gi"))},
			wantBlocked: []string{"a: pdb"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := round(epoch, pools(full), tc.types, tc.nodes...)
			if tc.name == "a PodDisruptionBudget allowing no disruption blocks the node" {
				r.PDBs = []*policyv1.PodDisruptionBudget{pdb("guarded", 0)}
			}
			d := decide(t, singleNode, r)
			if got := commanded(d); !slices.Equal(got, tc.want) {
				t.Errorf("commands %q, want %q", got, tc.want)
			}
			if got := blockedKinds(d); !slices.Equal(got, tc.wantBlocked) {
				t.Errorf("blocked %q, want %q", got, tc.wantBlocked)
			}
		})
	}
}

// The seed's GPU rule: a pool with the WhenEmpty policy never has a busy node
// consolidated, however much a replacement would save.
func TestWhenEmptyNeverConsolidatesABusyNode(t *testing.T) {
	gpu := onDemand("gpu")
	gpu.Spec.Disruption.ConsolidationPolicy = v1alpha1.ConsolidationPolicyWhenEmpty
	r := round(epoch, pools(gpu), nil, typedNode("g1", "gpu", "large", v1alpha1.CapacityTypeOnDemand, 0, sized("vllm", "100m", "1Gi")),
		typedNode("g2", "gpu", "large", v1alpha1.CapacityTypeOnDemand, 0, sized("vllm-2", "100m", "1Gi")))
	for _, m := range []disruption.Method{singleNode, multiNode} {
		if d := decide(t, m, r); len(d.Commands) != 0 || d.Eligible != 0 {
			t.Errorf("%s: commands %q, %d eligible; want none", m.Name(), commanded(d), d.Eligible)
		}
	}
}

func TestSpotToSpotConsolidation(t *testing.T) {
	full := pool("default", "0s", budget("100%", "", 0))
	spotNode := func() *scheduler.StateNode {
		return typedNode("a", "default", "medium", v1alpha1.CapacityTypeSpot, 0, sized("w1", "1500m", "4Gi"))
	}
	for _, tc := range []struct {
		name       string
		spotToSpot bool
		types      []*cloudprovider.InstanceType
		want       []string
		wantCT     string
	}{
		{name: "off by default: spot is replaced by cheaper on-demand only", types: append(catalogue(), spotTypes(20)...),
			want: []string{"Underutilized[a]+small"}, wantCT: v1alpha1.CapacityTypeOnDemand},
		{name: "on, with fewer than 15 cheaper spot types: on-demand only", spotToSpot: true, types: append(catalogue(), spotTypes(10)...),
			want: []string{"Underutilized[a]+small"}, wantCT: v1alpha1.CapacityTypeOnDemand},
		{name: "on, with 15 cheaper spot types or more: spot", spotToSpot: true, types: append(catalogue(), spotTypes(20)...),
			want: []string{"Underutilized[a]+c1"}, wantCT: v1alpha1.CapacityTypeSpot},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := disruption.NewSingleNode(disruption.ConsolidationOptions{SpotToSpot: tc.spotToSpot})
			d := decide(t, m, round(epoch, pools(full), tc.types, spotNode()))
			if got := commanded(d); !slices.Equal(got, tc.want) {
				t.Fatalf("commands %q, want %q", got, tc.want)
			}
			if got := d.Commands[0].Replacements[0].Offering.CapacityType; got != tc.wantCT {
				t.Errorf("replacement capacity type %s, want %s", got, tc.wantCT)
			}
		})
	}
}

func TestMultiNodeConsolidation(t *testing.T) {
	full := onDemand("default")
	var four []*scheduler.StateNode
	for _, name := range []string{"a", "b", "c", "d"} {
		four = append(four, node(name, "default", 0, sized("w-"+name, "500m", "1Gi")))
	}
	d := decide(t, multiNode, round(epoch, pools(full), nil, four...))
	if got, want := commanded(d), []string{"Underutilized[a b c d]+medium"}; !slices.Equal(got, want) {
		t.Fatalf("commands %q, want %q", got, want)
	}
	if got, want := d.Commands[0].Savings, 4*0.4-0.4; got < want-1e-9 || got > want+1e-9 {
		t.Errorf("savings %v, want %v", got, want)
	}

	// A budget of 2 caps the prefix: two deleted, their pods on the others.
	two := onDemand("default")
	two.Spec.Disruption.Budgets = []v1alpha1.Budget{budget("2", "", 0)}
	d = decide(t, multiNode, round(epoch, pools(two), nil, four...))
	if got, want := commanded(d), []string{"Underutilized[a b]"}; !slices.Equal(got, want) {
		t.Fatalf("with a budget of 2: commands %q, want %q", got, want)
	}
}

// The churn guard's window: a node a disruption launched is not consolidated
// again for RecentWindow.
func TestARecentReplacementIsNotConsolidated(t *testing.T) {
	full := onDemand("default")
	fresh := replacing(node("a", "default", 0, sized("w1", "1500m", "4Gi")), "large")
	fresh.NodeClaim.Annotations[v1alpha1.AnnotationDisruptionCommand] = "cmd-1"
	fresh.NodeClaim.Status.Conditions[0].LastTransitionTime = metav1.NewTime(epoch) // initialized at epoch
	for _, tc := range []struct {
		at          time.Duration
		want        []string
		wantBlocked []string
	}{
		{at: 29 * time.Minute, wantBlocked: []string{"a: churn"}},
		{at: 30 * time.Minute, want: []string{"Underutilized[a]+small"}},
	} {
		d := decide(t, singleNode, round(epoch.Add(tc.at), pools(full), nil, fresh))
		if got := commanded(d); !slices.Equal(got, tc.want) {
			t.Errorf("at %s: commands %q, want %q", tc.at, got, tc.want)
		}
		if got := blockedKinds(d); !slices.Equal(got, tc.wantBlocked) {
			t.Errorf("at %s: blocked %q, want %q", tc.at, got, tc.wantBlocked)
		}
	}
}

func TestDrift(t *testing.T) {
	drifting := onDemand("default")
	for _, tc := range []struct {
		name        string
		pool        *v1alpha1.NodePool
		nodes       []*scheduler.StateNode
		want        []string
		wantBlocked []string
	}{
		{name: "a node that has not drifted stays", nodes: []*scheduler.StateNode{node("a", "default", 0, sized("w", "1", "1Gi"))}},
		{name: "empty drifted nodes are deleted together",
			nodes: []*scheduler.StateNode{drifted(node("a", "default", 0)), drifted(node("b", "default", 0))},
			want:  []string{"Drifted[a b]"}},
		{name: "a busy drifted node is replaced by what its pods need",
			nodes: []*scheduler.StateNode{drifted(node("a", "default", 0, sized("w", "3", "4Gi")))},
			want:  []string{"Drifted[a]+medium"}},
		{name: "a busy drifted node whose pods fit elsewhere is deleted",
			nodes: []*scheduler.StateNode{drifted(node("a", "default", 0, sized("w", "1", "1Gi"))), node("b", "default", 0)},
			want:  []string{"Drifted[a]"}},
		{name: "the Drifted budgets apply",
			pool: func() *v1alpha1.NodePool {
				p := onDemand("default")
				p.Spec.Disruption.Budgets = append(p.Spec.Disruption.Budgets, budget("0", "", 0, v1alpha1.DisruptionReasonDrifted))
				return p
			}(),
			nodes:       []*scheduler.StateNode{drifted(node("a", "default", 0))},
			wantBlocked: []string{"a: budget"}},
		{name: "a drifted node whose pods fit nowhere is blocked",
			nodes:       []*scheduler.StateNode{drifted(node("a", "default", 0, pinned("pinned")))},
			wantBlocked: []string{"a: unschedulable"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.pool == nil {
				tc.pool = drifting
			}
			d := decide(t, disruption.NewDrift(scheduler.Options{}), round(epoch, pools(tc.pool), nil, tc.nodes...))
			if got := commanded(d); !slices.Equal(got, tc.want) {
				t.Errorf("commands %q, want %q", got, tc.want)
			}
			if got := blockedKinds(d); !slices.Equal(got, tc.wantBlocked) {
				t.Errorf("blocked %q, want %q", got, tc.wantBlocked)
			}
		})
	}
}

// priced is an on-demand-only type of vcpu vCPU and 4 GiB per vCPU at price.
func priced(name string, vcpu int64, price float64) *cloudprovider.InstanceType {
	return schedulertest.NewInstanceType(name, vcpu, 4*vcpu<<30, 110, cloudprovider.Offerings{
		{Zone: zone, CapacityType: v1alpha1.CapacityTypeOnDemand, Price: price, Available: true}})
}

// replacing records on the node's claim that it replaced nodes of types.
func replacing(sn *scheduler.StateNode, types string) *scheduler.StateNode {
	sn.NodeClaim.Annotations[v1alpha1.AnnotationReplacedInstanceTypes] = types
	return sn
}

// pdb guards the pod named app with allowed disruptions left.
func pdb(app string, allowed int32) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: app},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed},
	}
}
