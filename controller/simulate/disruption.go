package simulate

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/disruption"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
	"github.com/stowage-dev/stowage/controller/simulate/report"
)

// disruptionLog books what the disruption controller did and what held it
// back, from the structured data it reports (disruption.Observer).
type disruptionLog struct{ w *world }

var _ disruption.Observer = disruptionLog{}

// Executed books a command: the nodes it removed and launched, and what it
// saves at the prices the instances run at. Drift renews nodes rather than
// saving: it books none.
func (l disruptionLog) Executed(cmd disruption.Command, replacements []*v1alpha1.NodeClaim) {
	c := report.Consolidation{At: l.w.clk.Now(), Method: cmd.Method, Reason: cmd.Reason}
	var removed, launched float64
	for _, cand := range cmd.Candidates {
		if node := cand.NodeClaim.Status.NodeName; node != "" {
			l.w.voluntary[node] = true
			l.w.waits.released(node)
		}
		if in, ok := l.w.instances[nodeclaim.InstanceID(cand.NodeClaim.Status.ProviderID)]; ok {
			c.Removed = append(c.Removed, report.Instance{Name: in.id, Offering: offer(in.instanceType, in.zone, in.capacityType)})
			removed += in.price
		}
	}
	for _, claim := range replacements {
		if in, ok := l.w.instances[nodeclaim.InstanceID(claim.Status.ProviderID)]; ok {
			c.Replacements = append(c.Replacements, report.Instance{Name: in.id, Offering: offer(in.instanceType, in.zone, in.capacityType)})
			launched += in.price
		}
	}
	if cmd.Reason != v1alpha1.DisruptionReasonDrifted {
		c.SavingsPerHour = max(removed-launched, 0)
	}
	l.w.out.consolidations = append(l.w.out.consolidations, c)
}

// Blocked books a candidate held back, and why.
func (l disruptionLog) Blocked(m disruption.Method, b disruption.Blocked) {
	l.w.out.blocked = append(l.w.out.blocked, report.Blocked{At: l.w.clk.Now(), Method: m.Name(), Blocker: b.Kind,
		Node: b.Candidate.Name(), Why: b.Why})
	if b.Kind == disruption.BlockedPDB || b.Kind == disruption.BlockedBudget {
		l.w.waits.drainHeld(b.Candidate.NodePool.Name, b.Candidate.Name(), epoch.Add(1<<62),
			fmt.Sprintf("node %s cannot be disrupted: %s", b.Candidate.Name(), b.Why))
	}
}

// repaired books a node repair replaced: its pods were lost already, or are
// as good as lost on a node that is not Ready.
func (w *world) repaired(node *corev1.Node) {
	c := report.Consolidation{At: w.clk.Now(), Method: "repair", Reason: "Unhealthy"}
	if in, ok := w.instances[nodeclaim.InstanceID(node.Spec.ProviderID)]; ok {
		c.Removed = []report.Instance{{Name: in.id, Offering: offer(in.instanceType, in.zone, in.capacityType)}}
	}
	w.out.consolidations = append(w.out.consolidations, c)
}

// expired books an expired claim's node as a disruption that saves nothing:
// the provisioner launches its replacement like any other capacity.
func (w *world) expired(claim *v1alpha1.NodeClaim) {
	c := report.Consolidation{At: w.clk.Now(), Method: "expiration", Reason: "Expired"}
	if node := claim.Status.NodeName; node != "" {
		w.voluntary[node] = true
	}
	if in, ok := w.instances[nodeclaim.InstanceID(claim.Status.ProviderID)]; ok {
		c.Removed = []report.Instance{{Name: in.id, Offering: offer(in.instanceType, in.zone, in.capacityType)}}
	}
	w.out.consolidations = append(w.out.consolidations, c)
}
