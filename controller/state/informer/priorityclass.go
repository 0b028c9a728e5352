package informer

import (
	schedulingv1 "k8s.io/api/scheduling/v1"

	"github.com/stowage-dev/stowage/controller/state"
)

// priorityClasses feeds every PriorityClass, for the solver's priority order.
func priorityClasses(c *state.Cluster) watch {
	return watch{&schedulingv1.PriorityClass{}, handler(c.UpdatePriorityClass, c.DeletePriorityClass)}
}
