package simulate_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/simulate"
	"github.com/stowage-dev/stowage/controller/simulate/report"
)

// spotBack is when the scenario's spot shortage ends, and onDemandGone when,
// 30 minutes later, no on-demand node may be left.
const (
	spotBack     = 50 * time.Minute
	onDemandGone = spotBack + 30*time.Minute
	// peakRatio bounds the on-demand fleet's cost at its peak over what a
	// from-scratch solve of the pods it runs costs.
	peakRatio = 1.3
)

// TestSpotComesBack replays the user's storm (all c7i/m7i spot short from
// 15m to 50m while the web tier triples), with a PodDisruptionBudget of
// maxUnavailable: 1 on web, checked for seeds 1 to 5: the fallback fleet
// is packed about as a from-scratch solve packs its pods, every on-demand
// node is gone 30 minutes after spot returns, and no pod is lost nor any
// invariant broken, the PDB's (simulate.InvariantPDB) among them.
func TestSpotComesBack(t *testing.T) {
	s := readScenario(t, "testdata/spot-comes-back.yaml")
	if len(s.PodDisruptionBudgets) != 1 || s.PodDisruptionBudgets[0].Spec.MaxUnavailable.String() != "1" {
		t.Fatal("the scenario has no PodDisruptionBudget of maxUnavailable: 1 on web")
	}
	for seed := range int64(5) {
		seed++
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			t.Parallel()
			rep, violations, err := simulate.RunChecked(t.Context(), s, simulate.Options{Seed: &seed})
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range violations {
				t.Errorf("%s", v)
			}
			stowage := system(t, rep, simulate.SystemStowage)
			if lost := stowage.PodsLost(); lost != 0 {
				t.Errorf("%d pods lost", lost)
			}
			series := stowage.Series
			for i, n := range series.NodesByCapacityType[v1alpha1.CapacityTypeOnDemand] {
				if at := time.Duration(i) * rep.Step; at >= onDemandGone && n > 0 {
					t.Errorf("%d on-demand nodes at %v, want none from %v", n, at, onDemandGone)
					break
				}
			}
			peak, pods := onDemandPeak(series)
			scratch := fromScratch(t, s, pods)
			if peak == 0 || peak > peakRatio*scratch {
				t.Errorf("the on-demand fleet peaked at $%.4f/h for %d pods, a from-scratch solve of them costs $%.4f/h: want at most %.1f times",
					peak, pods, scratch, peakRatio)
			}
			t.Logf("on-demand peak $%.4f/h for %d pods, from scratch $%.4f/h (%.2f times)", peak, pods, scratch, peak/scratch)
		})
	}
}

// onDemandPeak is the on-demand fleet's highest cost per hour in the
// samples, and the pods it ran then.
func onDemandPeak(series report.Series) (cost float64, pods int) {
	for i, c := range series.CostPerHourByCapacityType[v1alpha1.CapacityTypeOnDemand] {
		if c > cost {
			cost, pods = c, series.PodsByCapacityType[v1alpha1.CapacityTypeOnDemand][i]
		}
	}
	return cost, pods
}

// fromScratch is the cost per hour of the claims a solve of pods of the
// scenario's web Deployment launches on its on-demand pool alone, with the
// built-in catalogue's prices.
func fromScratch(t *testing.T, s *simulate.Scenario, n int) float64 {
	t.Helper()
	var pool *v1alpha1.NodePool
	for _, np := range s.NodePools {
		if np.Name == "web-on-demand" {
			pool = np
		}
	}
	if pool == nil || len(s.Deployments) != 1 {
		t.Fatal("the scenario has no web-on-demand pool or not one Deployment")
	}
	opts := catalogue.DefaultOptions()
	opts.Zones = s.Spec.Zones
	snap := &scheduler.Snapshot{NodePools: []*v1alpha1.NodePool{pool},
		InstanceTypes: map[string][]*cloudprovider.InstanceType{pool.Name: catalogue.InstanceTypes(catalogue.Builtin(), opts)}}
	tmpl := s.Deployments[0].Spec.Template
	for i := range n {
		snap.Pods = append(snap.Pods, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i), Namespace: "default",
			Labels: tmpl.Labels}, Spec: tmpl.Spec})
	}
	res := scheduler.Solve(snap, scheduler.Options{})
	if len(res.Unschedulable) > 0 {
		t.Fatalf("a from-scratch solve leaves %d pods unschedulable: %s", len(res.Unschedulable), res.Unschedulable[0].Reason)
	}
	return res.TotalPrice()
}
