package scheduler_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

func ownedBy(uid types.UID) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: uid, Controller: ptr.To(true)}}
	}
}

// TestAClaimKeepsRoomForExpectedPods: one pending 2-CPU pod of a workload
// expected to grow gets a claim sized for the pods to come, as long as that
// makes each pod cheaper; its own pod is all it carries. c7i prices scale
// with size, so a c7i.xlarge (one such pod) costs as much per pod as a
// c7i.2xlarge holding two, and less than one holding three.
func TestAClaimKeepsRoomForExpectedPods(t *testing.T) {
	for _, tc := range []struct {
		name      string
		expected  int
		mutate    func(*corev1.Pod)
		wantType  string
		wantSpare int
	}{
		{name: "no growth: the smallest type that fits", expected: 0, wantType: "c7i.xlarge"},
		{name: "one more pod to come: no type is cheaper per pod", expected: 1, wantType: "c7i.xlarge"},
		{name: "two more: a c7i.2xlarge holds all three", expected: 2, wantType: "c7i.2xlarge", wantSpare: 2},
		{name: "six more: a c7i.4xlarge's memory holds six, no cheaper per pod", expected: 6, wantType: "c7i.2xlarge", wantSpare: 2},
		{name: "twelve more: a c7i.8xlarge holds thirteen", expected: 12, wantType: "c7i.8xlarge", wantSpare: 12},
		{name: "one pod a node (hostname anti-affinity): no room kept", expected: 6, mutate: antiAffinity(corev1.LabelHostname), wantType: "c7i.xlarge"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mutate := []func(*corev1.Pod){ownedBy("rs-web")}
			if tc.mutate != nil {
				mutate = append(mutate, tc.mutate)
			}
			s := snapshot(pods(1, "web", "2", "4Gi", mutate...), pool("c7i", require(v1alpha1.LabelInstanceFamily, v1alpha1.OperatorIn, "c7i"),
				require(v1alpha1.LabelCapacityType, v1alpha1.OperatorIn, v1alpha1.CapacityTypeOnDemand)))
			s.Expected = map[types.UID]int{"rs-web": tc.expected}
			r := solve(t, s, scheduler.Options{})
			if len(r.NewNodeClaims) != 1 {
				t.Fatalf("%d claims, want 1", len(r.NewNodeClaims))
			}
			nc := r.NewNodeClaims[0]
			if got := nc.InstanceTypes[0].Name; got != tc.wantType || nc.Anticipated != tc.wantSpare || len(nc.Pods) != 1 {
				t.Errorf("claim on %s with room for %d and %d pods, want %s, %d and 1", got, nc.Anticipated, len(nc.Pods), tc.wantType, tc.wantSpare)
			}
		})
	}
}
