package simulate

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TestDeletingPodsPastTheirPDBBreaksThePDBInvariant: two Ready pods under
// a maxUnavailable: 1 budget deleted outright from a node marked as taken
// away by a voluntary disruption break InvariantPDB; the first of them,
// which the budget could spare, does not.
func TestDeletingPodsPastTheirPDBBreaksThePDBInvariant(t *testing.T) {
	done := false
	vs := runBroken(t, guarded, func(w *world, _ *invariantChecker) {
		if done || w.elapsed() < 5*time.Minute {
			return
		}
		pods := readyPodsByNode(t, w)
		for node, on := range pods {
			if len(on) < 2 {
				continue
			}
			done, w.voluntary[node] = true, true
			for _, p := range on[:2] {
				if err := w.kube.Delete(t.Context(), p); err != nil {
					t.Fatal(err)
				}
			}
			return
		}
	})
	if !done {
		t.Fatal("no node ran two Ready web pods at once")
	}
	only(t, vs, InvariantPDB)
	if len(vs) != 1 {
		t.Errorf("%d violations %v, want one: the second pod deleted", len(vs), vs)
	}
}

func readyPodsByNode(t *testing.T, w *world) map[string][]*corev1.Pod {
	t.Helper()
	list := &corev1.PodList{}
	if err := w.kube.List(t.Context(), list); err != nil {
		t.Fatal(err)
	}
	out := map[string][]*corev1.Pod{}
	for i := range list.Items {
		if p := &list.Items[i]; podReady(p) && p.DeletionTimestamp == nil && p.Spec.NodeName != "" {
			out[p.Spec.NodeName] = append(out[p.Spec.NodeName], p)
		}
	}
	return out
}
