package disruption_test

import (
	"slices"
	"testing"

	policyv1 "k8s.io/api/policy/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/disruption"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// paced is a PDB over the pod named app that allows no disruption now,
// with expected pods of which desired must stay healthy.
func paced(app string, expected, desired int32) *policyv1.PodDisruptionBudget {
	p := pdb(app, 0)
	p.Status.ExpectedPods, p.Status.DesiredHealthy, p.Status.CurrentHealthy = expected, desired, desired
	return p
}

// A return or drift renews a node, its replacement Ready before any eviction: a PDB
// that allows no disruption now, one of its pods moving, but one once that
// pod is back (maxUnavailable 1), paces the drain instead of holding the
// node back. One that allows none even then (maxUnavailable 0) still
// blocks, and consolidation stays held by either.
func TestAPDBThatPacesEvictionsHoldsNoReturn(t *testing.T) {
	web := returning("web", 100, v1alpha1.CapacityTypeSpot, v1alpha1.CapacityTypeOnDemand)
	for _, tc := range []struct {
		name                 string
		pdb                  *policyv1.PodDisruptionBudget
		want, wantBlocked    []string
		consolidationBlocked []string
	}{
		{name: "maxUnavailable 1, a pod moving", pdb: paced("w1", 3, 2), want: []string{"Fallback[a]+small"},
			consolidationBlocked: []string{"a: pdb"}},
		{name: "maxUnavailable 0", pdb: paced("w1", 3, 3), wantBlocked: []string{"a: pdb"},
			consolidationBlocked: []string{"a: pdb"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := round(epoch, pools(web), nil, node("a", "web", 0, sized("w1", "1500m", "4Gi")))
			r.PDBs = []*policyv1.PodDisruptionBudget{tc.pdb}
			d := decide(t, disruption.NewReturn(scheduler.Options{}), r)
			if got := commanded(d); !slices.Equal(got, tc.want) {
				t.Errorf("return: commands %q, want %q", got, tc.want)
			}
			if got := blockedKinds(d); !slices.Equal(got, tc.wantBlocked) {
				t.Errorf("return: blocked %q, want %q", got, tc.wantBlocked)
			}
			drifting := round(epoch, pools(web), nil, drifted(node("a", "web", 0, sized("w1", "1500m", "4Gi"))))
			drifting.PDBs = r.PDBs
			if got, want := commanded(decide(t, disruption.NewDrift(scheduler.Options{}), drifting)), len(tc.want); len(got) != want {
				t.Errorf("drift: commands %q, want %d", got, want)
			}
			if got := blockedKinds(decide(t, singleNode, r)); !slices.Equal(got, tc.consolidationBlocked) {
				t.Errorf("single-node: blocked %q, want %q", got, tc.consolidationBlocked)
			}
		})
	}
}
