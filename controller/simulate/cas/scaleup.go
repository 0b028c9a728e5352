package cas

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// scaleUp launches nodes of one group for the pending pods nothing else will
// take. It reports whether it attempted a launch, which starts the scale-down
// delay and ends the loop, as in CA.
func (a *Autoscaler) scaleUp(ctx context.Context, w World, v *view, now time.Time) ([]Action, bool) {
	pending := a.unhelped(a.pods.infos(pendingPods(w.Unschedulable())), v)
	if len(pending) == 0 {
		return nil, false
	}
	opts, skipped := a.options(pending, v, now)
	best := leastWaste(opts)
	if best == nil {
		reason := "no node group fits the pods"
		if len(skipped) > 0 {
			reason = strings.Join(skipped, "; ")
		}
		return []Action{{At: now, Kind: ActionNoScaleUp, Count: len(pending), Reason: reason}}, false
	}
	return a.execute(ctx, w, best, v, now), true
}

// pendingPods drops pods CA does not scale up for: DaemonSet pods and pods
// already bound to a node.
func pendingPods(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if p.Spec.NodeName == "" && !isDaemonSetPod(p) {
			out = append(out, p)
		}
	}
	return out
}

// unhelped drops the pods that fit on a node still coming up (launched, not
// Ready), placing them in turn, as CA counts upcoming nodes before scaling up
// again. Ready nodes are not re-checked (CA's filterOutSchedulable): World's
// scheduler already found the pods no room there, with every predicate.
func (a *Autoscaler) unhelped(pods []*podInfo, v *view) []*podInfo {
	var targets []*target
	for i := range v.nodes {
		n := &v.nodes[i]
		if !n.Ready && a.byName[n.Group] != nil {
			targets = append(targets, a.nodeTarget(n))
		}
	}
	ceiling := maxFree(targets)
	var out []*podInfo
	for _, p := range pods {
		if !p.requests.Fits(ceiling) || placeFirstFit(p, targets) == nil {
			out = append(out, p)
		}
	}
	return out
}

// nodeTarget is a node as a place for pods; a node of no known group, or in
// a zone its group does not list, has no labels but its zone and no taints.
func (a *Autoscaler) nodeTarget(n *Node) *target {
	t := &target{node: n.Name, free: n.Allocatable.Sub(n.Requested), key: n.Group + "/" + n.Zone}
	reqs, ok := a.reqs[t.key]
	if !ok {
		t.key = "?/" + n.Zone
		t.reqs = scheduling.FromLabels(map[string]string{corev1.LabelTopologyZone: n.Zone})
		return t
	}
	t.reqs, t.taints = reqs, a.byName[n.Group].Taints
	return t
}

// template is an empty node of g in any of its zones.
func (a *Autoscaler) template(g *NodeGroup) *target {
	key := g.Name + "/"
	return &target{key: key, reqs: a.reqs[key], taints: g.Taints, free: g.Allocatable}
}

// maxFree is an upper bound of every target's free room, for quick rejection.
func maxFree(targets []*target) scheduling.Resources {
	var out scheduling.Resources
	for _, t := range targets {
		out = out.Max(t.free)
	}
	return out
}

// options sizes a scale-up of every group that could take some of the pods;
// skipped says why groups the pods fit were left out.
func (a *Autoscaler) options(pods []*podInfo, v *view, now time.Time) ([]option, []string) {
	var opts []option
	var skipped []string
	for _, g := range a.groups {
		tmpl := a.template(g)
		fitting := slices.DeleteFunc(slices.Clone(pods), func(p *podInfo) bool { return !p.allowed(tmpl) || !p.requests.Fits(g.Allocatable) })
		if len(fitting) == 0 {
			continue
		}
		if info, off := a.backoff.backedOff(g.Name, now); off {
			skipped = append(skipped, fmt.Sprintf("%s: backed off until %s (%s)", g.Name, info.until.UTC().Format(time.RFC3339), info.reason))
			continue
		}
		room := g.MaxSize - v.size[g.Name]
		if room <= 0 {
			skipped = append(skipped, fmt.Sprintf("%s: max size %d reached", g.Name, g.MaxSize))
			continue
		}
		if count, placed := estimate(g, fitting, min(room, a.cfg.MaxNodesPerScaleUp)); count > 0 {
			opts = append(opts, option{group: g, count: count, pods: placed})
		}
	}
	return opts, skipped
}

// execute launches o's nodes the way an ASG does: spread over its zones,
// fewest nodes first, a zone's shortfall retried in the zones that did not
// fail. A shortfall left at the end backs the group off.
func (a *Autoscaler) execute(ctx context.Context, w World, o *option, v *view, now time.Time) []Action {
	g := o.group
	counts := v.zoneCounts(g.Name)
	zones := slices.Clone(g.Zones)
	remaining := o.count
	reason := fmt.Sprintf("%d pending pods, least waste %.3f", len(o.pods), waste(o))
	var actions []Action
	var lastErr error
	for remaining > 0 && len(zones) > 0 && ctx.Err() == nil {
		plan := spread(remaining, zones, counts)
		var failed []string
		for _, z := range zones {
			n := plan[z]
			if n == 0 {
				continue
			}
			got, err := a.launch(ctx, w, g, z, n)
			counts[z] += got
			remaining -= got
			if got > 0 {
				actions = append(actions, Action{At: now, Kind: ActionScaleUp, Group: g.Name, Zone: z, Count: got, Reason: reason})
			}
			if err != nil {
				lastErr, failed = err, append(failed, z)
				actions = append(actions, Action{At: now, Kind: ActionScaleUpFailed, Group: g.Name, Zone: z, Count: n - got, Reason: err.Error()})
			}
		}
		zones = slices.DeleteFunc(zones, func(z string) bool { return slices.Contains(failed, z) })
	}
	if remaining > 0 {
		actions = append(actions, a.backOff(g.Name, failureReason(ctx, lastErr), now))
	}
	return actions
}

// launch calls World.Launch and returns a non-nil error whenever it fell short.
func (a *Autoscaler) launch(ctx context.Context, w World, g *NodeGroup, zone string, n int) (int, error) {
	got, err := w.Launch(ctx, g, zone, n)
	got = max(0, min(got, n))
	if got == n {
		return got, nil
	}
	if err == nil {
		err = fmt.Errorf("launching %s in %s: launched %d of %d", g.Name, zone, got, n)
	}
	return got, err
}

// failureReason names CA's error class for a failed scale-up.
func failureReason(ctx context.Context, err error) string {
	switch {
	case err == nil && ctx.Err() != nil:
		return "scale-up interrupted: " + ctx.Err().Error()
	case err == nil:
		return "scale-up fell short"
	case cloudprovider.IsInsufficientCapacityError(err):
		return "out of resources: " + err.Error()
	}
	return "launch error: " + err.Error()
}

// spread splits n new nodes over zones one at a time, each to the zone with
// the fewest nodes (counts plus those already assigned), ties to the earlier zone.
func spread(n int, zones []string, counts map[string]int) map[string]int {
	plan := make(map[string]int, len(zones))
	for range n {
		best := zones[0]
		for _, z := range zones[1:] {
			if counts[z]+plan[z] < counts[best]+plan[best] {
				best = z
			}
		}
		plan[best]++
	}
	return plan
}
