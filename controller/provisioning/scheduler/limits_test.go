package scheduler_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler/schedulertest"
)

// fallbackTypes are l-2 and l-4: 2 and 4 vCPU (2 GiB each per vCPU), on-demand
// in one zone at 0.01 per vCPU. A 1-vCPU pod fits l-2 and may fall back to l-4.
func fallbackTypes() []*cloudprovider.InstanceType {
	var out []*cloudprovider.InstanceType
	for _, vcpu := range []int64{2, 4} {
		ofs := cloudprovider.Offerings{{Zone: zoneA, CapacityType: v1alpha1.CapacityTypeOnDemand, Price: 0.01 * float64(vcpu), Available: true}}
		out = append(out, schedulertest.NewInstanceType(fmt.Sprintf("l-%d", vcpu), vcpu, 2*vcpu<<30, 32, ofs))
	}
	return out
}

// limitedSnapshot is a pool limited to cpu vCPU offering fallbackTypes.
func limitedSnapshot(cpu string, ps []*corev1.Pod, nodes ...*scheduler.StateNode) *scheduler.Snapshot {
	np := pool("default", func(np *v1alpha1.NodePool) {
		np.Spec.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	})
	return &scheduler.Snapshot{Pods: ps, Nodes: nodes, NodePools: []*v1alpha1.NodePool{np},
		InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": fallbackTypes()}}
}

// worstCPU sums, over the new claims, the vCPU of the largest type each may launch.
func worstCPU(r *scheduler.Results) int64 {
	var total int64
	for _, nc := range r.NewNodeClaims {
		var largest int64
		for _, it := range nc.InstanceTypes {
			largest = max(largest, it.Capacity.CPU)
		}
		total += largest
	}
	return total
}

// unlaunchedClaim is an in-flight NodeClaim of the default pool from an
// earlier batch, allowed l-2 or l-4 and holding one web pod; capacity is set
// once it has launched.
func unlaunchedClaim(capacity corev1.ResourceList) *scheduler.StateNode {
	nc := &v1alpha1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "default-earlier", Labels: map[string]string{v1alpha1.LabelNodePool: "default"}},
		Spec: v1alpha1.NodeClaimSpec{
			Requirements: []v1alpha1.NodeSelectorRequirementWithMinValues{
				{Key: corev1.LabelInstanceTypeStable, Operator: v1alpha1.OperatorIn, Values: []string{"l-2", "l-4"}},
				{Key: zoneKey, Operator: v1alpha1.OperatorIn, Values: []string{zoneA}},
			},
			Resources: v1alpha1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
		},
		Status: v1alpha1.NodeClaimStatus{Capacity: capacity},
	}
	return &scheduler.StateNode{NodeClaim: nc, Pods: pods(1, "web", "1", "1Gi", antiAffinity(hostKey))}
}

func TestLimitsHoldUnderFallback(t *testing.T) {
	for _, policy := range scheduler.PreferencePolicies {
		t.Run(string(policy), func(t *testing.T) {
			// Three 1-vCPU pods that need a node each, on a pool limited to 8 vCPU:
			// three claims of l-2 (6) fit, but not three that may each fall back to l-4 (12).
			s := limitedSnapshot("8", pods(3, "web", "1", "1Gi", antiAffinity(hostKey)))
			r := solve(t, s, scheduler.Options{Preferences: policy})
			requireAllPlaced(t, s, r)
			if got := worstCPU(r); got > 8000 {
				t.Errorf("the claims may launch %dm vCPU together, over the 8 vCPU limit", got)
			}
			var lists []string
			for _, nc := range r.NewNodeClaims {
				lists = append(lists, typeNames(nc)...)
				lists = append(lists, "|")
			}
			// The first claim keeps its fallback while the limit leaves room for it.
			if want := "l-2 l-4 | l-2 | l-2 |"; strings.Join(lists, " ") != want {
				t.Errorf("fallback lists %q, want %q", strings.Join(lists, " "), want)
			}
		})
	}
}

func TestLimitsHoldAcrossBatches(t *testing.T) {
	for _, tc := range []struct {
		name     string
		capacity corev1.ResourceList
		// placed is how many of the three new pods fit under the 8 vCPU limit.
		placed int
	}{
		// The earlier claim may still launch l-4: 8 - 4 leaves two l-2 claims.
		{"an unlaunched claim counts at its largest type", nil, 2},
		// It launched as l-2: 8 - 2 leaves three l-2 claims.
		{"a launched claim counts at its capacity", corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			earlier := unlaunchedClaim(tc.capacity)
			s := limitedSnapshot("8", pods(3, "next", "1", "1Gi", withLabel("app", "web"), antiAffinity(hostKey)), earlier)
			r := solve(t, s, scheduler.Options{})
			if r.PodCount() != tc.placed {
				t.Fatalf("placed %d of 3, want %d; unschedulable: %s", r.PodCount(), tc.placed, reasons(r))
			}
			requireReason(t, r, 3-tc.placed, "limit")
			earlierCPU := int64(4000)
			if tc.capacity != nil {
				earlierCPU = tc.capacity.Cpu().MilliValue()
			}
			if got := worstCPU(r) + earlierCPU; got > 8000 {
				t.Errorf("the earlier claim and the new ones may launch %dm vCPU together, over the 8 vCPU limit", got)
			}
		})
	}
}

// limitTypes are wide (16 vCPU) and narrow (8 vCPU, at twice the price).
func limitTypes() []*cloudprovider.InstanceType {
	ofs := func(price float64) cloudprovider.Offerings {
		return cloudprovider.Offerings{{Zone: zoneA, CapacityType: v1alpha1.CapacityTypeOnDemand, Price: price, Available: true}}
	}
	return []*cloudprovider.InstanceType{
		schedulertest.NewInstanceType("wide", 16, 32<<30, 32, ofs(0.1)),
		schedulertest.NewInstanceType("narrow", 8, 16<<30, 32, ofs(0.2)),
	}
}

// TestLimitsChooseATypeThatFits places pods on a dearer type with less
// capacity when the cheapest that holds them would break the pool's limit,
// as GPU types do (seed 6 of the scenario generator: the cheapest 8-GPU type
// has 192 vCPU, p4d.24xlarge 96). wide has 16 vCPU, narrow 8 at twice the
// price; the pool is limited to 24 vCPU, and each pod needs a node.
func TestLimitsChooseATypeThatFits(t *testing.T) {
	for _, policy := range scheduler.PreferencePolicies {
		t.Run(string(policy), func(t *testing.T) {
			s := limitedSnapshot("24", pods(3, "web", "1", "1Gi", antiAffinity(hostKey)))
			s.InstanceTypes["default"] = limitTypes()
			r := solve(t, s, scheduler.Options{Preferences: policy})
			if r.PodCount() != 2 {
				t.Fatalf("placed %d of 3, want 2 (one on wide, one on narrow); unschedulable: %s", r.PodCount(), reasons(r))
			}
			requireReason(t, r, 1, "nodepool default: launching would exceed its cpu limit")
			var lists []string
			for _, nc := range r.NewNodeClaims {
				lists = append(lists, strings.Join(typeNames(nc), ","))
			}
			// The first claim may fall back to narrow: its worst case is still wide.
			if want := "wide,narrow|narrow"; strings.Join(lists, "|") != want {
				t.Errorf("claims list %q, want %q", strings.Join(lists, "|"), want)
			}
			if got := worstCPU(r); got > 24000 {
				t.Errorf("the claims may launch %dm vCPU together, over the 24 vCPU limit", got)
			}
		})
	}
}

// TestLimitReasonLooksBeyondTheCheapestType: a pod refused for another
// reason is not told that the limit stops it while a type that fits the
// limit holds it (wide breaks the 12 vCPU limit, narrow does not).
func TestLimitReasonLooksBeyondTheCheapestType(t *testing.T) {
	s := limitedSnapshot("12", pods(1, "web", "1", "1Gi", podAffinity(false, 0, zoneKey, "db")))
	s.InstanceTypes["default"] = limitTypes()
	r := solve(t, s, scheduler.Options{})
	requireReason(t, r, 1, "nodepool default: cannot satisfy pod affinity")
}
