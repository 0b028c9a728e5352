package disruption_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler/schedulertest"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

func TestProto(t *testing.T) {
	pods := schedulertest.W1(20000)
	for _, p := range pods {
		if p.Spec.Affinity != nil && p.Spec.Affinity.PodAntiAffinity != nil {
			p.Spec.Affinity = nil
		}
		if len(p.Spec.TopologySpreadConstraints) > 0 && p.Spec.TopologySpreadConstraints[0].TopologyKey == corev1.LabelHostname {
			p.Spec.TopologySpreadConstraints = nil
		}
	}
	types := schedulertest.C2()
	var it = types[0]
	for _, x := range types {
		if x.Name == "m-16x-amd64-linux" {
			it = x
		}
	}
	zones := []string{"test-zone-a", "test-zone-b", "test-zone-c", "test-zone-d"}
	var nodes []*scheduler.StateNode
	for i := 0; i < 2000; i++ {
		name := fmt.Sprintf("node-%04d", i)
		alloc := it.Allocatable()
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
		for k, v := range it.Requirements.Labels() {
			n.Labels[k] = v
		}
		n.Labels[corev1.LabelTopologyZone] = zones[i%4]
		n.Labels[corev1.LabelHostname] = name
		n.Labels[v1alpha1.LabelNodePool] = "default"
		n.Labels[v1alpha1.LabelCapacityType] = "on-demand"
		n.Status.Allocatable = alloc.List()
		n.Status.Capacity = it.Capacity.List()
		nodes = append(nodes, &scheduler.StateNode{Node: n})
	}
	_ = resource.Quantity{}
	// round robin
	for i, p := range pods {
		n := nodes[i%2000]
		p.Spec.NodeName = n.Node.Name
		n.Pods = append(n.Pods, p)
	}
	snap := schedulertest.Snapshot(nil, types)
	snap.Nodes = nodes
	start := time.Now()
	r := scheduler.Solve(snap, scheduler.Options{})
	t.Logf("empty solve %v", time.Since(start))
	_ = r
	// remove first k
	for _, k := range []int{1000, 1000, 1000} {
		s2 := *snap
		s2.Nodes = slices.Clone(nodes)
		var pend []*corev1.Pod
		for i := 0; i < k; i++ {
			cp := *s2.Nodes[i]
			cp.MarkedForDeletion = true
			s2.Nodes[i] = &cp
			for _, p := range cp.Pods {
				q := p.DeepCopy()
				q.Spec.NodeName = ""
				pend = append(pend, q)
			}
		}
		s2.Pods = pend
		s2.InstanceTypes = nil
		start := time.Now()
		r := scheduler.Solve(&s2, scheduler.Options{})
		t.Logf("k=%d pods=%d solve %v new=%d unsched=%d", k, len(pend), time.Since(start), len(r.NewNodeClaims), len(r.Unschedulable))
	}
	_ = scheduling.Resources{}
}
