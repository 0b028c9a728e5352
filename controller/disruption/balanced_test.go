package disruption_test

import (
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/disruption"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// balancedFleet is a large node running two 1-CPU pods of priority prio,
// which a medium replacement holds for half the price, beside six full
// medium nodes whose pods stay (do-not-disrupt) but count in the pool's
// totals. The pods started long ago: each counts 1 for its age.
func balancedFleet(prio int32) []*scheduler.StateNode {
	busy := func(name string) *corev1.Pod {
		p := sized(name, "1", "1Gi")
		p.Spec.Priority = ptr.To(prio)
		return p
	}
	out := []*scheduler.StateNode{typedNode("big", "web", "large", v1alpha1.CapacityTypeOnDemand, 0, busy("b1"), busy("b2"))}
	for i := range 6 {
		name := fmt.Sprintf("m%d", i)
		out = append(out, node(name, "web", 0, annotated(sized(name+"-1", "1900m", "1Gi"), v1alpha1.AnnotationDoNotDisrupt),
			annotated(sized(name+"-2", "1900m", "1Gi"), v1alpha1.AnnotationDoNotDisrupt)))
	}
	return out
}

// TestBalancedWeighsTheEvictionCostAgainstTheSaving: the large node's
// replacement saves an eighth of the pool's cost; with pods of default
// priority it disrupts a seventh of the pool and passes, with pods of
// priority 10^9 (eviction cost 10 each) it would disrupt two fifths and
// does not. WhenEmptyOrUnderutilized replaces it either way.
func TestBalancedWeighsTheEvictionCostAgainstTheSaving(t *testing.T) {
	for _, tc := range []struct {
		policy string
		prio   int32
		want   []string
	}{
		{v1alpha1.ConsolidationPolicyBalanced, 0, []string{"Underutilized[big]+medium"}},
		{v1alpha1.ConsolidationPolicyBalanced, 1000000000, nil},
		{v1alpha1.ConsolidationPolicyWhenEmptyOrUnderutilized, 1000000000, []string{"Underutilized[big]+medium"}},
	} {
		t.Run(fmt.Sprintf("%s, priority %d", tc.policy, tc.prio), func(t *testing.T) {
			web := onDemand("web")
			web.Spec.Disruption.ConsolidationPolicy = tc.policy
			r := round(epoch, pools(web), nil, balancedFleet(tc.prio)...)
			d := decide(t, disruption.NewSingleNode(disruption.ConsolidationOptions{}), r)
			if got := commanded(d); !slices.Equal(got, tc.want) {
				t.Errorf("commands %v, want %v", got, tc.want)
			}
		})
	}
}

// TestAPoolsMinimumSavingOverridesTheFlag: a replacement saving 10% is not
// made under the default 15%, and is in a pool that asks for 5%; one saving
// 17.5% is made under the default, and not in a pool that asks for 25%.
func TestAPoolsMinimumSavingOverridesTheFlag(t *testing.T) {
	for _, tc := range []struct {
		price   float64
		minimum *string
		want    []string
	}{
		{0.36, nil, nil},
		{0.36, ptr.To("5%"), []string{"Underutilized[a]+medium-bis"}},
		{0.33, nil, []string{"Underutilized[a]+medium-bis"}},
		{0.33, ptr.To("25%"), nil},
	} {
		t.Run(fmt.Sprintf("$%.2f of $0.40, pool minimum %v", tc.price, ptr.Deref(tc.minimum, "unset")), func(t *testing.T) {
			web := onDemand("default")
			web.Spec.Disruption.ConsolidationMinSavings = tc.minimum
			types := append(catalogue(), priced("medium-bis", 4, tc.price))
			r := round(epoch, pools(web), types, node("a", "default", 0, sized("w1", "3", "4Gi")))
			d := decide(t, disruption.NewSingleNode(disruption.ConsolidationOptions{}), r)
			if got := commanded(d); !slices.Equal(got, tc.want) {
				t.Errorf("commands %v, want %v", got, tc.want)
			}
		})
	}
}
