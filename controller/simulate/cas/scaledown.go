package cas

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/scheduling"
)

// ResourceGPU is the resource that makes a node a GPU node, whose utilization
// CA measures by GPU alone.
const ResourceGPU corev1.ResourceName = "nvidia.com/gpu"

// candidate is a ready node of a known group whose utilization is under the threshold.
type candidate struct {
	node  *Node
	util  float64
	empty bool
	// movable are the pods that must find another node.
	movable []*corev1.Pod
}

// scaleDown tracks unneeded nodes and, out of cooldown, deletes those
// unneeded long enough.
func (a *Autoscaler) scaleDown(ctx context.Context, w World, v *view, now time.Time) []Action {
	unneeded := a.updateUnneeded(v, now)
	if a.inCooldown(now) {
		return nil
	}
	return a.deleteUnneeded(ctx, w, v, unneeded, now)
}

// inCooldown reports whether a recent scale-up, deletion or failed deletion
// holds scale-down back.
func (a *Autoscaler) inCooldown(now time.Time) bool {
	within := func(t time.Time, d time.Duration) bool { return !t.IsZero() && t.Add(d).After(now) }
	return within(a.lastScaleUp, a.cfg.ScaleDownDelayAfterAdd) ||
		within(a.lastDelete, a.cfg.ScaleDownDelayAfterDelete) ||
		within(a.lastFailure, a.cfg.ScaleDownDelayAfterFailure)
}

// updateUnneeded finds the nodes that are unneeded now, least utilized first:
// each one's pods are placed on the other ready nodes, and a node found
// unneeded is no longer a destination for the next. Nodes that take pods
// this way are no longer candidates. Timers of nodes no longer unneeded reset.
func (a *Autoscaler) updateUnneeded(v *view, now time.Time) []candidate {
	dests := a.destinations(v)
	received := map[string]bool{}
	var unneeded []candidate
	for _, c := range a.candidates(v) {
		if !received[c.node.Name] && dests.relocate(c, received) {
			unneeded = append(unneeded, c)
		}
	}
	next := make(map[string]time.Time, len(unneeded))
	for _, c := range unneeded {
		since, ok := a.unneeded[c.node.Name]
		if !ok {
			since = now
		}
		next[c.node.Name] = since
	}
	a.unneeded = next
	return unneeded
}

// candidates are the ready nodes of known groups under the utilization
// threshold, least utilized first, then by name.
func (a *Autoscaler) candidates(v *view) []candidate {
	var out []candidate
	for i := range v.nodes {
		n := &v.nodes[i]
		if !n.Ready || a.byName[n.Group] == nil {
			continue
		}
		u := Utilization(n)
		if u >= a.cfg.ScaleDownUtilizationThreshold {
			continue
		}
		movable := slices.DeleteFunc(slices.Clone(n.Pods), staysOnNode)
		out = append(out, candidate{node: n, util: u, empty: len(movable) == 0, movable: movable})
	}
	slices.SortStableFunc(out, func(x, y candidate) int {
		return cmp.Or(cmp.Compare(x.util, y.util), strings.Compare(x.node.Name, y.node.Name))
	})
	return out
}

// Utilization is CA's node utilization: requested over allocatable, the
// larger of CPU and memory; on a node with GPUs, the GPU ratio alone.
func Utilization(n *Node) float64 {
	if gpus := n.Allocatable.Get(ResourceGPU); gpus > 0 {
		return float64(n.Requested.Get(ResourceGPU)) / float64(gpus)
	}
	return max(ratio(n.Requested.CPU, n.Allocatable.CPU), ratio(n.Requested.Memory, n.Allocatable.Memory))
}

func ratio(used, total int64) float64 {
	if total <= 0 {
		return 0
	}
	return float64(used) / float64(total)
}

// destinations are the ready nodes pods may move to in one loop.
type destinations struct {
	targets []*target
	// node name -> its target
	byNode  map[string]*target
	ceiling scheduling.Resources
	pods    *podCache
}

func (a *Autoscaler) destinations(v *view) *destinations {
	d := &destinations{byNode: map[string]*target{}, pods: a.pods}
	for i := range v.nodes {
		if n := &v.nodes[i]; n.Ready {
			t := a.nodeTarget(n)
			d.targets = append(d.targets, t)
			d.byNode[n.Name] = t
		}
	}
	d.ceiling = maxFree(d.targets)
	return d
}

// relocate places every movable pod of c on other destinations. On success
// c's node stops being a destination and the nodes that took pods are added
// to received; on failure nothing changes.
func (d *destinations) relocate(c candidate, received map[string]bool) bool {
	for _, p := range c.movable {
		if evictionBlocker(p) != "" {
			return false
		}
	}
	self := d.byNode[c.node.Name]
	self.gone = true
	pods := d.pods.infos(c.movable)
	var placed []*target
	for _, p := range pods {
		t := d.place(p)
		if t == nil {
			for i, u := range placed {
				u.free = u.free.Add(pods[i].requests)
			}
			self.gone = false
			return false
		}
		placed = append(placed, t)
	}
	for _, t := range placed {
		received[t.node] = true
	}
	return true
}

func (d *destinations) place(p *podInfo) *target {
	if !p.requests.Fits(d.ceiling) {
		return nil
	}
	for _, t := range d.targets {
		if !t.gone && p.fits(t) {
			t.free = t.free.Sub(p.requests)
			return t
		}
	}
	return nil
}

// deleteUnneeded deletes nodes unneeded for ScaleDownUnneededTime without
// taking a group under its min size: up to MaxEmptyBulkDelete empty nodes,
// or else one non-empty node.
func (a *Autoscaler) deleteUnneeded(ctx context.Context, w World, v *view, unneeded []candidate, now time.Time) []Action {
	sizes := maps.Clone(v.size)
	var empty, busy []candidate
	for _, c := range unneeded {
		g := a.byName[c.node.Group]
		if now.Sub(a.unneeded[c.node.Name]) < a.cfg.ScaleDownUnneededTime || sizes[g.Name] <= g.MinSize {
			continue
		}
		switch {
		case c.empty && len(empty) < a.cfg.MaxEmptyBulkDelete:
			empty = append(empty, c)
			sizes[g.Name]--
		case !c.empty:
			busy = append(busy, c)
		}
	}
	doomed := empty
	if len(doomed) == 0 && len(busy) > 0 {
		doomed = busy[:1]
	}
	var actions []Action
	for _, c := range doomed {
		actions = append(actions, a.remove(ctx, w, c, now))
	}
	return actions
}

// remove deletes one node through World and records the outcome.
func (a *Autoscaler) remove(ctx context.Context, w World, c candidate, now time.Time) Action {
	n := c.node
	act := Action{At: now, Group: n.Group, Zone: n.Zone, Node: n.Name, Count: len(c.movable)}
	if err := w.Remove(ctx, n.Name); err != nil {
		a.lastFailure = now
		act.Kind, act.Reason = ActionScaleDownFailed, "removing node: "+err.Error()
		return act
	}
	a.lastDelete = now
	act.Kind, act.Reason = ActionScaleDown, fmt.Sprintf("empty, unneeded for %s", now.Sub(a.unneeded[n.Name]))
	if !c.empty {
		act.Reason = fmt.Sprintf("utilization %.2f under %.2f, unneeded for %s", c.util, a.cfg.ScaleDownUtilizationThreshold, now.Sub(a.unneeded[n.Name]))
	}
	delete(a.unneeded, n.Name)
	return act
}
