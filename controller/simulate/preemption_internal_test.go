package simulate

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/scheduling"
)

// fullNode is a 4-CPU node running one 1-CPU pod per priority given, each
// labelled app=<app>, registered in w.
func fullNode(w *world, name, app string, priorities ...int32) *schedNode {
	n := &schedNode{node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, allocatable: scheduling.Resources{CPU: 4000, Pods: 110}}
	for i, p := range priorities {
		sp := &simPod{key: fmt.Sprintf("default/%s-%d", name, i), node: name, seq: len(w.pods), requests: scheduling.Resources{CPU: 1000, Pods: 1},
			pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Labels: map[string]string{"app": app}},
				Spec: corev1.PodSpec{Priority: ptr.To(p)}}}
		w.pods[sp.key] = sp
		w.onNode[name] = append(w.onNode[name], sp)
		n.requested = n.requested.Add(sp.requests)
	}
	return n
}

func preemptor(cpu int64) *simPod {
	return &simPod{requests: scheduling.Resources{CPU: cpu, Pods: 1}, pod: &corev1.Pod{Spec: corev1.PodSpec{Priority: ptr.To[int32](1000)}}}
}

// TestPreemptionPicksTheNodeKubeSchedulerPicks checks pickOneNodeForPreemption's
// order and SelectVictimsOnNode's reprieve, case by case.
func TestPreemptionPicksTheNodeKubeSchedulerPicks(t *testing.T) {
	guard := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "guarded"},
		Spec: policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}}}}
	for _, tc := range []struct {
		name    string
		cpu     int64
		a, b    []int32
		aApp    string
		want    string
		victims int
	}{
		{"fewest PDB violations first", 1000, []int32{10, 10, 10, 10}, []int32{10, 10, 10, 10}, "guarded", "b", 1},
		{"then the lowest highest victim", 1000, []int32{50, 50, 50, 50}, []int32{10, 10, 10, 10}, "free", "b", 1},
		{"then the lowest sum of victim priorities", 2000, []int32{10, 10, 10, 10}, []int32{10, 5, 1000, 1000}, "free", "b", 2},
		{"a node whose pods are not lower is none", 1000, []int32{1000, 1000, 1000, 1000}, []int32{2000, 10, 10, 10}, "free", "b", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &world{pods: map[string]*simPod{}, onNode: map[string][]*simPod{}}
			pdbs := &pdbAllowance{pdbs: []*policyv1.PodDisruptionBudget{guard}, allowed: map[string]int32{"default/guarded": 0}}
			a, b := fullNode(w, "a", tc.aApp, tc.a...), fullNode(w, "b", "free", tc.b...)
			var best *candidate
			for _, n := range []*schedNode{a, b} {
				if c := w.victimsOn(n, preemptor(tc.cpu), pdbs); c != nil && (best == nil || c.better(best)) {
					best = c
				}
			}
			if best == nil || best.node.node.Name != tc.want || len(best.victims) != tc.victims {
				t.Fatalf("chose %+v, want node %s with %d victims", best, tc.want, tc.victims)
			}
		})
	}
}
