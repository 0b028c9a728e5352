package simulate

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
)

// left checks InvariantPDB for a pod leaving: a Ready pod of a node a
// voluntary disruption takes away must leave each PDB that selects it with
// at least the healthy pods the budget desires. A budget whose status
// cannot be computed (SyncFailed) allows nothing, and the eviction API
// refuses every eviction under it: it is left to that.
func (c *invariantChecker) left(w *world, pod *corev1.Pod) {
	if !podReady(pod) || !w.voluntary[pod.Spec.NodeName] || len(w.s.PodDisruptionBudgets) == 0 {
		return
	}
	ctx := context.Background()
	pdbs, err := w.kube.pdbsOf(ctx, pod)
	if err != nil {
		c.report(w, InvariantPDB, "pod "+pod.Namespace+"/"+pod.Name, "listing its PodDisruptionBudgets: %v", err)
		return
	}
	for _, pdb := range pdbs {
		status, err := w.pdbStatus(ctx, pdb)
		if err != nil {
			c.report(w, InvariantPDB, "pod "+pod.Namespace+"/"+pod.Name, "computing PodDisruptionBudget %s: %v", pdb.Name, err)
			continue
		}
		if failed(status) || status.CurrentHealthy >= status.DesiredHealthy {
			continue
		}
		c.report(w, InvariantPDB, "pod "+pod.Namespace+"/"+pod.Name,
			"left node %s, which a voluntary disruption takes away, leaving PodDisruptionBudget %s/%s %d healthy pods where it desires %d",
			pod.Spec.NodeName, pdb.Namespace, pdb.Name, status.CurrentHealthy, status.DesiredHealthy)
	}
}

func failed(s policyv1.PodDisruptionBudgetStatus) bool {
	cond := meta.FindStatusCondition(s.Conditions, policyv1.DisruptionAllowedCondition)
	return cond != nil && cond.Reason == policyv1.SyncFailedReason
}
