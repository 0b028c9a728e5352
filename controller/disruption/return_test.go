package disruption_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/disruption"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// returning is a pool of weight w allowing the capacity types, that returns
// its nodes after 10 minutes, within a 100% budget.
func returning(name string, w int32, capacityTypes ...string) *v1alpha1.NodePool {
	p := pool(name, "0s", budget("100%", "", 0))
	p.Spec.Weight = ptr.To(w)
	p.Spec.Disruption.ReturnAfter = ptr.To(v1alpha1.MustParseDuration("10m"))
	p.Spec.Template.Spec.Requirements = []v1alpha1.NodeSelectorRequirementWithMinValues{{Key: v1alpha1.LabelCapacityType,
		Operator: v1alpha1.OperatorIn, Values: capacityTypes}}
	return p
}

// settledSince says every offering of the types has been settled since at.
func settledSince(types []*cloudprovider.InstanceType, at time.Time) map[disruption.OfferingKey]time.Time {
	out := map[disruption.OfferingKey]time.Time{}
	for _, it := range types {
		for _, o := range it.Offerings {
			out[disruption.OfferingKey{InstanceType: it.Name, Zone: o.Zone, CapacityType: o.CapacityType}] = at
		}
	}
	return out
}

// flapping is the catalogue with every spot offering short twice in the hour.
func flapping() []*cloudprovider.InstanceType {
	var out []*cloudprovider.InstanceType
	for _, it := range catalogue() {
		cp := *it
		cp.Offerings = slices.Clone(it.Offerings)
		for i := range cp.Offerings {
			if cp.Offerings[i].CapacityType == v1alpha1.CapacityTypeSpot {
				cp.Offerings[i].RecentShortages = 2
			}
		}
		out = append(out, &cp)
	}
	return out
}

// onDemandOnly is a pod that asks for on-demand capacity.
func onDemandOnly(p *corev1.Pod) *corev1.Pod {
	p.Spec.NodeSelector = map[string]string{v1alpha1.LabelCapacityType: v1alpha1.CapacityTypeOnDemand}
	return p
}

// spotPinned reports whether every replacement of the decision may only
// launch spot.
func spotPinned(d disruption.Decision) bool {
	for _, cmd := range d.Commands {
		for _, nc := range cmd.Replacements {
			if ct := nc.Requirements.Get(v1alpha1.LabelCapacityType); !ct.Has(v1alpha1.CapacityTypeSpot) || ct.Has(v1alpha1.CapacityTypeOnDemand) {
				return false
			}
		}
	}
	return true
}

func TestReturnToPreferredCapacity(t *testing.T) {
	web := returning("web", 100, v1alpha1.CapacityTypeSpot, v1alpha1.CapacityTypeOnDemand)
	never := returning("web", 100, v1alpha1.CapacityTypeSpot, v1alpha1.CapacityTypeOnDemand)
	never.Spec.Disruption.ReturnAfter = ptr.To(v1alpha1.MustParseDuration(v1alpha1.Never))
	primary, fallback := returning("primary", 100, v1alpha1.CapacityTypeOnDemand), returning("fallback", 10, v1alpha1.CapacityTypeOnDemand)
	twoOf5 := returning("web", 100, v1alpha1.CapacityTypeSpot, v1alpha1.CapacityTypeOnDemand)
	twoOf5.Spec.Disruption.Budgets = []v1alpha1.Budget{budget("40%", "", 0)}
	atItsLimit := returning("primary", 100, v1alpha1.CapacityTypeOnDemand)
	atItsLimit.Spec.Limits = corev1.ResourceList{"nodes": resource.MustParse("1")}
	oneAtATime := returning("web", 100, v1alpha1.CapacityTypeSpot, v1alpha1.CapacityTypeOnDemand)
	oneAtATime.Spec.Disruption.Budgets = []v1alpha1.Budget{budget("1", "", 0)}
	// roomy runs on-demand too, with room for a's pod; it is no candidate.
	roomy := typedNode("roomy", "web", "large", v1alpha1.CapacityTypeOnDemand, 0, sized("r1", "1", "1Gi"))
	annotated(roomy.Node, v1alpha1.AnnotationDoNotDisrupt)
	for _, tc := range []struct {
		name    string
		pools   []*v1alpha1.NodePool
		types   []*cloudprovider.InstanceType
		settled time.Duration // ago; 0 for a round without a settling memory
		nodes   []*scheduler.StateNode
		want    []string
		wakeAt  time.Time
	}{
		{name: "an on-demand node of a pool that allows spot goes back to spot", pools: pools(web),
			nodes: []*scheduler.StateNode{node("a", "web", 0, sized("w1", "1500m", "4Gi"))},
			want:  []string{"Fallback[a]+small"}},
		{name: "once spot has been settled for returnAfter", pools: pools(web), settled: 10 * time.Minute,
			nodes: []*scheduler.StateNode{node("a", "web", 0, sized("w1", "1500m", "4Gi"))},
			want:  []string{"Fallback[a]+small"}},
		{name: "not before: it waits for spot to settle", pools: pools(web), settled: 4 * time.Minute,
			nodes:  []*scheduler.StateNode{node("a", "web", 0, sized("w1", "1500m", "4Gi"))},
			wakeAt: epoch.Add(6 * time.Minute)},
		{name: "nor onto spot that went short twice in the hour: it looks again in returnAfter", pools: pools(web), types: flapping(),
			nodes:  []*scheduler.StateNode{node("a", "web", 0, sized("w1", "1500m", "4Gi"))},
			wakeAt: epoch.Add(10 * time.Minute)},
		{name: "a pool can turn it off", pools: pools(never),
			nodes: []*scheduler.StateNode{node("a", "web", 0, sized("w1", "1500m", "4Gi"))}},
		{name: "a node of a lower-weight pool goes back to the heavier pool", pools: pools(primary, fallback),
			nodes: []*scheduler.StateNode{node("a", "fallback", 0, sized("w1", "1500m", "4Gi"))},
			want:  []string{"Fallback[a]+small"}},
		{name: "nor when the heavier pool is at its limit, counting its full nodes", pools: pools(atItsLimit, fallback),
			nodes: []*scheduler.StateNode{node("full", "primary", 0, sized("f1", "3500m", "12Gi")), node("a", "fallback", 0, sized("w1", "1500m", "4Gi"))}},
		{name: "a node of the heaviest pool that runs what it allows stays", pools: pools(primary, fallback),
			nodes: []*scheduler.StateNode{node("a", "primary", 0, sized("w1", "1500m", "4Gi"))}},
		{name: "pods that ask for on-demand stay on it", pools: pools(web),
			nodes: []*scheduler.StateNode{node("a", "web", 0, onDemandOnly(sized("w1", "1500m", "4Gi")))}},
		{name: "pods move onto preferred capacity only, never onto another node on the fallback", pools: pools(web),
			nodes: []*scheduler.StateNode{node("a", "web", 0, sized("w1", "1500m", "4Gi")), roomy},
			want:  []string{"Fallback[a]+small"}},
		{name: "a pool's nodes go back together, oldest first, as far as its budget allows", pools: pools(twoOf5),
			nodes: []*scheduler.StateNode{node("n1", "web", 5*time.Minute, sized("w1", "1", "1Gi")), node("n2", "web", time.Minute, sized("w2", "1", "1Gi")),
				node("n3", "web", 2*time.Minute, sized("w3", "1", "1Gi")), node("n4", "web", 4*time.Minute, sized("w4", "1", "1Gi")),
				node("n5", "web", 3*time.Minute, sized("w5", "1", "1Gi"))},
			want: []string{"Fallback[n2 n3]+medium"}},
		{name: "an older node held by pods that need on-demand gives its budget to the next", pools: pools(oneAtATime),
			nodes: []*scheduler.StateNode{node("held", "web", time.Minute, onDemandOnly(sized("w1", "1", "1Gi"))),
				node("b", "web", 5*time.Minute, sized("w2", "1500m", "4Gi"))},
			want: []string{"Fallback[b]+small"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := round(epoch, tc.pools, tc.types, tc.nodes...)
			if tc.settled > 0 {
				r.Settled = settledSince(catalogue(), epoch.Add(-tc.settled))
			}
			d := decide(t, disruption.NewReturn(scheduler.Options{}), r)
			if got := commanded(d); !slices.Equal(got, tc.want) {
				t.Errorf("commands %v, want %v", got, tc.want)
			}
			if !d.WakeAt.Equal(tc.wakeAt) {
				t.Errorf("wakes at %v, want %v", d.WakeAt, tc.wakeAt)
			}
			if !spotPinned(d) && tc.pools[0] == web {
				t.Error("a replacement in the node's own pool may launch on-demand")
			}
		})
	}
}

// TestReturnSaysWhy: the command names where the pods ran and where they go.
func TestReturnSaysWhy(t *testing.T) {
	r := round(epoch, pools(returning("web", 100, v1alpha1.CapacityTypeSpot, v1alpha1.CapacityTypeOnDemand)), nil,
		node("a", "web", 0, sized("w1", "1500m", "4Gi")))
	d := decide(t, disruption.NewReturn(scheduler.Options{}), r)
	if len(d.Commands) != 1 {
		t.Fatalf("commands %v, want one", commanded(d))
	}
	cmd := d.Commands[0]
	if cmd.Target != (disruption.Target{NodePool: "web", CapacityType: v1alpha1.CapacityTypeSpot}) {
		t.Errorf("target %+v, want spot in web", cmd.Target)
	}
	for _, part := range []string{"nodepool web (weight 100) runs them on-demand, a fallback", "spot capacity of nodepool web", "10m0s"} {
		if !strings.Contains(cmd.Why, part) {
			t.Errorf("why %q does not say %q", cmd.Why, part)
		}
	}
}

// TestANodeMovedBackIsHeldForAnHour: a node a return launched half an hour
// ago is not consolidated, though a cheaper node would hold its pods; an
// hour after, it is.
func TestANodeMovedBackIsHeldForAnHour(t *testing.T) {
	moved := func() *scheduler.StateNode {
		sn := node("back", "default", 0, sized("w1", "1500m", "4Gi"))
		sn.NodeClaim.Annotations[v1alpha1.AnnotationDisruptionCommand] = "x7k2p"
		sn.NodeClaim.Annotations[v1alpha1.AnnotationDisruptionReason] = v1alpha1.DisruptionReasonFallback
		sn.NodeClaim.Status.Conditions[0].LastTransitionTime = metav1.NewTime(epoch.Add(-30 * time.Minute))
		return sn
	}
	single := disruption.NewSingleNode(disruption.ConsolidationOptions{})
	d := decide(t, single, round(epoch, pools(onDemand("default")), nil, moved()))
	if got, want := blockedKinds(d), []string{"back: " + disruption.BlockedChurn}; !slices.Equal(got, want) || len(d.Commands) > 0 {
		t.Fatalf("blocked %v and commands %v, want %v and none", got, commanded(d), want)
	}
	if why := blockedNames(d)[0]; !strings.Contains(why, "moved it back to preferred capacity") {
		t.Errorf("why %q", why)
	}
	d = decide(t, single, round(epoch.Add(31*time.Minute), pools(onDemand("default")), nil, moved()))
	if got := commanded(d); !slices.Equal(got, []string{"Underutilized[back]+small"}) {
		t.Errorf("an hour after, commands %v, want the replacement", got)
	}
}
