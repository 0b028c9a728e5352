package provisioning

import (
	"cmp"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// WithDryRun makes the provisioner decide and report without acting
// (stowage run --dry-run): no NodeClaim is created and no pod nominated; each
// decision is logged ("would launch 3 × m6i.xlarge in us-east-1b for 12
// pods"), counted in DryRunNodeClaims and told to each pod in an event.
func WithDryRun() Option { return func(p *Provisioner) { p.dryRun = true } }

// ReasonDryRun is the event reason of a decision made in a dry run.
const ReasonDryRun = "DryRun"

// launchGroup is the claims of a decision with one pool, first instance
// type, zone and capacity type.
type launchGroup struct {
	pool, instanceType, zone, capacityType string
	claims, pods                           int
}

// reportDryRun says what the decision would launch and where each pod
// would go, acting on nothing.
func (p *Provisioner) reportDryRun(r *scheduler.Results) {
	for _, g := range launchGroups(r.NewNodeClaims) {
		DryRunNodeClaims.WithLabelValues(g.pool, g.instanceType, g.zone, g.capacityType).Add(float64(g.claims))
		p.log.Info(fmt.Sprintf("dry run: would launch %d × %s in %s for %d pods", g.claims, g.instanceType, g.zone, g.pods),
			"nodepool", g.pool, "instance_type", g.instanceType, "zone", g.zone, "capacity_type", g.capacityType)
	}
	for _, nc := range r.NewNodeClaims {
		for _, pod := range realPods(nc.Pods) {
			p.recorder.Publish(dryRunEvent(pod, fmt.Sprintf("Dry run: would launch a %s %s node in %s (nodepool %s) for the pod",
				nc.Offering.CapacityType, nc.InstanceTypes[0].Name, nc.Offering.Zone, nc.NodePool)))
		}
	}
	for _, pl := range r.Existing {
		if !scheduler.IsVirtual(pl.Pod) {
			p.recorder.Publish(dryRunEvent(pl.Pod, "Dry run: would nominate the pod to "+pl.Node))
		}
	}
	p.reportUnschedulable(r.Unschedulable)
}

func dryRunEvent(pod *corev1.Pod, message string) Event {
	return Event{Object: pod, Type: corev1.EventTypeNormal, Reason: ReasonDryRun, Action: "Provision", Message: message}
}

// launchGroups groups the claims, in a stable order.
func launchGroups(ncs []*scheduler.NewNodeClaim) []*launchGroup {
	byKey := map[string]*launchGroup{}
	var out []*launchGroup
	for _, nc := range ncs {
		g := launchGroup{pool: nc.NodePool, instanceType: nc.InstanceTypes[0].Name, zone: nc.Offering.Zone, capacityType: nc.Offering.CapacityType}
		key := g.pool + "|" + g.instanceType + "|" + g.zone + "|" + g.capacityType
		if byKey[key] == nil {
			byKey[key] = &g
			out = append(out, &g)
		}
		byKey[key].claims++
		byKey[key].pods += len(nc.Pods)
	}
	slices.SortStableFunc(out, func(a, b *launchGroup) int {
		return cmp.Or(cmp.Compare(a.pool, b.pool), cmp.Compare(a.instanceType, b.instanceType), cmp.Compare(a.zone, b.zone))
	})
	return out
}
