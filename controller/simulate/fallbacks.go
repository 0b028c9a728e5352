package simulate

import (
	"fmt"
	"slices"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/provisioning"
	"github.com/stowage-dev/stowage/controller/simulate/report"
)

// poolMoves books a claim that could not launch anything it allowed, and
// whose pods then launched in another pool, as a fallback: the report's
// fallbacks are not only a claim's own cheaper types. It learns where pods
// were planned from the provisioner's Nominated events (their objects, not
// their wording) and which claims were short from the cloud's errors.
type poolMoves struct {
	w *world
	// pod namespace/name -> the claim it was last nominated to
	nominated map[string]string
	// claim name -> what it could not launch
	short map[string]shortClaim
	// claim name -> the short claims of other batches whose pods it took
	from map[string][]string
}

// shortClaim is a claim the cloud found no capacity for.
type shortClaim struct {
	pool string
	// preferred is the cheapest offering it allowed.
	preferred report.Offering
	reported  bool
}

func newPoolMoves(w *world) *poolMoves {
	return &poolMoves{w: w, nominated: map[string]string{}, short: map[string]shortClaim{}, from: map[string][]string{}}
}

// planned is told of each provisioner event; a Nominated one moves its pod
// to the claim it names.
func (m *poolMoves) planned(e provisioning.Event) {
	claim, ok := e.Related.(*v1alpha1.NodeClaim)
	if e.Reason != provisioning.ReasonNominated || !ok {
		return
	}
	pod := e.Object.GetNamespace() + "/" + e.Object.GetName()
	if prev := m.nominated[pod]; prev != claim.Name {
		if _, short := m.short[prev]; short && !slices.Contains(m.from[claim.Name], prev) {
			m.from[claim.Name] = append(m.from[claim.Name], prev)
		}
	}
	m.nominated[pod] = claim.Name
}

// launchFailed is told of a claim whose launch found no capacity.
func (m *poolMoves) launchFailed(claim *v1alpha1.NodeClaim) {
	if _, seen := m.short[claim.Name]; seen {
		return
	}
	preferred, _ := m.w.cheapestAllowed(claim)
	m.short[claim.Name] = shortClaim{pool: claim.Labels[v1alpha1.LabelNodePool], preferred: preferred}
}

// launched books a fallback for each short claim of another pool whose pods
// the launched claim took.
func (m *poolMoves) launched(claim *v1alpha1.NodeClaim, in *simInstance) {
	pool := claim.Labels[v1alpha1.LabelNodePool]
	for _, name := range m.from[claim.Name] {
		s := m.short[name]
		if s.reported || s.pool == pool {
			continue
		}
		s.reported = true
		m.short[name] = s
		m.w.out.fallbacks = append(m.w.out.fallbacks, report.Fallback{At: m.w.clk.Now(), Short: s.preferred,
			Chosen: offer(in.instanceType, in.zone, in.capacityType), FromPool: s.pool, ToPool: pool,
			Reason: fmt.Sprintf("nodeclaim %s of nodepool %s: every offering it allows is short; its pods moved to nodeclaim %s of nodepool %s",
				name, s.pool, claim.Name, pool)})
	}
	delete(m.from, claim.Name)
}
