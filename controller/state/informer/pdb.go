package informer

import (
	policyv1 "k8s.io/api/policy/v1"

	"github.com/stowage-dev/stowage/controller/state"
)

// pdbs feeds every PodDisruptionBudget, for disruption decisions.
func pdbs(c *state.Cluster) watch {
	return watch{&policyv1.PodDisruptionBudget{}, handler(c.UpdatePodDisruptionBudget, c.DeletePodDisruptionBudget)}
}
