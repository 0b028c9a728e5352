package iampolicy

import (
	"math"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// PoolInstanceTypes lists, in the order of all, the instance types a pool's
// requirements allow: those for ControllerConfig.InstanceTypes. Its
// capacity types are left out: IAM cannot tell a launch into a reservation
// from another, and a catalogue prices no reservation, so a pool on
// reservations allows the types it names like any other.
func PoolInstanceTypes(pool *v1alpha1.NodePool, all []*cloudprovider.InstanceType) []string {
	reqs := scheduling.FromAPI(pool.Spec.Template.Spec.Requirements)
	delete(reqs, v1alpha1.LabelCapacityType)
	var out []string
	for _, it := range all {
		if it.Requirements.Intersects(reqs) && !math.IsInf(it.CheapestPrice(reqs), 1) {
			out = append(out, it.Name)
		}
	}
	return out
}
