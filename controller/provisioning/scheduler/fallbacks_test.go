package scheduler_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler/schedulertest"
)

// zonedTypes are two types offered on spot and on-demand in three zones.
func zonedTypes() []*cloudprovider.InstanceType {
	var out []*cloudprovider.InstanceType
	for _, t := range []struct {
		name  string
		vcpu  int64
		price float64
	}{{"z-4", 4, 0.2}, {"z-8", 8, 0.4}} {
		var ofs cloudprovider.Offerings
		for _, zone := range []string{"zone-a", "zone-b", "zone-c"} {
			ofs = append(ofs, cloudprovider.Offering{Zone: zone, CapacityType: v1alpha1.CapacityTypeSpot, Price: t.price / 3, Available: true},
				cloudprovider.Offering{Zone: zone, CapacityType: v1alpha1.CapacityTypeOnDemand, Price: t.price, Available: true})
		}
		out = append(out, schedulertest.NewInstanceType(t.name, t.vcpu, 4*t.vcpu<<30, 110, ofs))
	}
	return out
}

func capacityType(ct string) func(*v1alpha1.NodePool) {
	return func(np *v1alpha1.NodePool) {
		np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements,
			v1alpha1.NodeSelectorRequirementWithMinValues{Key: ctKey, Operator: v1alpha1.OperatorIn, Values: []string{ct}})
	}
}

func weight(w int32) func(*v1alpha1.NodePool) {
	return func(np *v1alpha1.NodePool) { np.Spec.Weight = ptr.To(w) }
}

// TestAZoneSpreadUnderAZoneMinValuesNamesTheMinValues: a zone spread pins
// each new node to one zone, so a pool asking for minValues 2 on the zone
// cannot take such pods; the reason names the minValues, which is the cause,
// not the spread, which holds on any pool without it.
func TestAZoneSpreadUnderAZoneMinValuesNamesTheMinValues(t *testing.T) {
	s := &scheduler.Snapshot{
		Pods:          pods(6, "web", "1", "2Gi", spreadBy(zoneKey, 1, corev1.DoNotSchedule)),
		NodePools:     []*v1alpha1.NodePool{pool("spot", capacityType("spot"), requireMin(zoneKey, v1alpha1.OperatorIn, 2, "zone-a", "zone-b", "zone-c"))},
		InstanceTypes: map[string][]*cloudprovider.InstanceType{"spot": zonedTypes()},
	}
	r := scheduler.Solve(s, scheduler.Options{})
	if len(r.Unschedulable) != 6 {
		t.Fatalf("%d pods unschedulable, want all 6", len(r.Unschedulable))
	}
	reason := r.Unschedulable[0].Reason
	if !strings.Contains(reason, "minValues 2 of "+zoneKey) || !strings.Contains(reason, "puts each new node in one "+zoneKey) {
		t.Errorf("reason %q does not name the zone's minValues", reason)
	}
}

// TestFallbacksSayWhyThePodsLeftTheHigherWeightPool: with an on-demand pool
// behind the spot one, the same pods all go on-demand, and the decision says
// why spot did not take them.
func TestFallbacksSayWhyThePodsLeftTheHigherWeightPool(t *testing.T) {
	s := &scheduler.Snapshot{
		Pods: pods(6, "web", "1", "2Gi", spreadBy(zoneKey, 1, corev1.DoNotSchedule)),
		NodePools: []*v1alpha1.NodePool{
			pool("spot", weight(100), capacityType("spot"), requireMin(zoneKey, v1alpha1.OperatorIn, 2, "zone-a", "zone-b", "zone-c")),
			pool("on-demand", weight(10), capacityType("on-demand"))},
		InstanceTypes: map[string][]*cloudprovider.InstanceType{"spot": zonedTypes(), "on-demand": zonedTypes()},
	}
	if r := scheduler.Solve(s, scheduler.Options{}); len(r.Fallbacks) != 0 {
		t.Errorf("fallbacks without ExplainFallbacks: %+v", r.Fallbacks)
	}
	r := scheduler.Solve(s, scheduler.Options{ExplainFallbacks: true})
	if len(r.Unschedulable) != 0 || r.PodCount() != 6 {
		t.Fatalf("%d placed, %d unschedulable; want all 6 on on-demand", r.PodCount(), len(r.Unschedulable))
	}
	if len(r.Fallbacks) != 1 {
		t.Fatalf("fallbacks %+v, want one for the web pods", r.Fallbacks)
	}
	f := r.Fallbacks[0]
	if f.NodePool != "on-demand" || len(f.Pods) != 6 || len(f.Skipped) != 1 || f.Skipped[0].NodePool != "spot" || f.Skipped[0].Weight != 100 {
		t.Fatalf("fallback %+v", f)
	}
	if !strings.Contains(f.Skipped[0].Reason, "minValues 2 of "+zoneKey) {
		t.Errorf("spot was skipped because %q; want its zone minValues named", f.Skipped[0].Reason)
	}
}
