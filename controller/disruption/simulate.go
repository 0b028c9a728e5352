package disruption

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// simulation is the answer to "were these candidates gone, where would their
// pods go?", from the scheduling core the provisioner uses.
type simulation struct {
	results *scheduler.Results
	// owner is pod namespace/name -> the candidate the pod runs on
	owner map[string]*Candidate
	// gone are the nodes taken away
	gone map[string]bool
}

// whatIf solves for the candidates' reschedulable pods as if the candidates
// were gone: they and every node that cannot take pods now (not Ready, still
// launching, or part of another command) are marked for deletion, so that
// they take no pod but their pods still count for topology spread and
// affinity; the candidates' own pods count as kube-scheduler will count them
// when their replacements are scheduled, terminating: for affinity, not for
// spreads. launch lets the solve add NodeClaims from the pools' instance
// types, on the offerings that have settled (launchTypes); without it, pods
// that fit on no node are unschedulable. The nodes alsoGone are removed as
// well, without their pods needing a home (other commands provide for them).
func whatIf(r *Round, opts scheduler.Options, candidates []*Candidate, launch bool, alsoGone ...*Candidate) simulation {
	gone := make(map[string]bool, len(candidates)+len(alsoGone))
	for _, c := range alsoGone {
		gone[c.Name()] = true
	}
	var types map[string][]*cloudprovider.InstanceType
	if launch {
		types = r.launchTypes()
	}
	return whatIfOn(r, opts, candidates, types, gone)
}

// whatIfOn is whatIf launching from types (none when nil), with the nodes
// gone names removed too.
func whatIfOn(r *Round, opts scheduler.Options, candidates []*Candidate, types map[string][]*cloudprovider.InstanceType, gone map[string]bool) simulation {
	sim := simulation{owner: map[string]*Candidate{}}
	var pods []*corev1.Pod
	for _, c := range candidates {
		gone[c.Name()] = true
		for _, p := range c.ReschedulablePods() {
			// A shallow copy: the solver only reads it, and a pod with a node
			// name counts as placed already.
			moved := *p
			moved.Spec.NodeName = ""
			pods = append(pods, &moved)
			sim.owner[p.Namespace+"/"+p.Name] = c
		}
	}
	// The pods of other nodes being drained that no nomination has given a
	// home yet need room too: solved with the candidates', a command cannot
	// count on room an earlier drain (an interruption, say) needs.
	pods = append(pods, unplacedDrained(r.Snapshot.Nodes, gone)...)
	snap := *r.Snapshot
	snap.Pods, snap.InstanceTypes = pods, types
	snap.Nodes, snap.LeftOut = simulatedNodes(r, pods, gone)
	for i, sn := range snap.Nodes {
		if gone[sn.Name()] {
			snap.Nodes[i] = evicting(sn, sim.owner, r.Now)
		}
	}
	sim.results, sim.gone = scheduler.Solve(&snap, opts), gone
	return sim
}

// unplacedDrained are the reschedulable pods of the nodes marked for
// deletion, other than gone, that are not nominated to another node yet (a
// nominated pod shows on its next home, unbound), as pods to place.
func unplacedDrained(nodes []*scheduler.StateNode, gone map[string]bool) []*corev1.Pod {
	nominated := map[string]bool{}
	for _, sn := range nodes {
		for _, p := range sn.Pods {
			if p.Spec.NodeName == "" {
				nominated[p.Namespace+"/"+p.Name] = true
			}
		}
	}
	var out []*corev1.Pod
	for _, sn := range nodes {
		if !sn.MarkedForDeletion || sn.Node == nil || gone[sn.Name()] {
			continue
		}
		for _, p := range sn.Pods {
			if p.Spec.NodeName == sn.Node.Name && scheduling.Reschedulable(p) && !nominated[p.Namespace+"/"+p.Name] {
				moved := *p
				moved.Spec.NodeName = ""
				out = append(out, &moved)
			}
		}
	}
	return out
}

// launchTypes are the pools' instance types with the offerings a voluntary
// disruption may launch on: those settled for ConsolidationSettleTime.
func (r *Round) launchTypes() map[string][]*cloudprovider.InstanceType {
	if r.memo != nil && r.memo.launch != nil {
		return r.memo.launch
	}
	types := r.settledTypes(ConsolidationSettleTime, nil)
	if r.memo != nil {
		r.memo.launch = types
	}
	return types
}

// simulatedNodes are the nodes a simulation of moving pods off the gone ones
// solves on: the compacted receivers when the pods allow it, else every node
// with those that cannot receive marked for deletion. leftOut are the nodes
// the receivers leave out: they still count toward their pools' limits.
func simulatedNodes(r *Round, pods []*corev1.Pod, gone map[string]bool) (nodes, leftOut []*scheduler.StateNode) {
	if receivers, ok := r.receivers(pods); ok {
		in := make(map[*scheduler.StateNode]bool, len(receivers))
		for _, sn := range receivers {
			if !gone[sn.Name()] {
				nodes, in[sn] = append(nodes, sn), true
			}
		}
		for _, sn := range r.Snapshot.Nodes {
			if !in[sn] {
				leftOut = append(leftOut, sn)
			}
		}
		return nodes, leftOut
	}
	out := make([]*scheduler.StateNode, len(r.Snapshot.Nodes))
	for i, sn := range r.Snapshot.Nodes {
		out[i] = sn
		if !sn.MarkedForDeletion && (gone[sn.Name()] || r.Busy[sn.Name()] || !receives(sn)) {
			marked := *sn
			marked.MarkedForDeletion = true
			out[i] = &marked
		}
	}
	return out, nil
}

// evicting is the node with those of its pods that moving names (by
// namespace/name) marked terminating since now, as they will be once evicted.
func evicting[V any](sn *scheduler.StateNode, moving map[string]V, now time.Time) *scheduler.StateNode {
	out := *sn
	out.Pods = slices.Clone(sn.Pods)
	for i, p := range out.Pods {
		if _, ok := moving[p.Namespace+"/"+p.Name]; ok && p.Spec.NodeName == sn.Name() && p.DeletionTimestamp == nil {
			leaving := *p
			leaving.DeletionTimestamp = &metav1.Time{Time: now}
			out.Pods[i] = &leaving
		}
	}
	return &out
}

// receives reports whether pods may be moved onto the node now: it has
// registered, is Ready and initialized. A claim still launching may never
// come up, so nothing counts on it.
func receives(sn *scheduler.StateNode) bool {
	if sn.Node == nil || !nodeReady(sn.Node) {
		return false
	}
	return sn.NodeClaim == nil || initialized(sn)
}

// unschedulable returns the candidates whose pods fit nowhere, each once, in
// the order of the solve's unschedulable pods, with the first reason.
func (s simulation) unschedulable() []Blocked {
	var out []Blocked
	seen := map[string]bool{}
	for _, u := range s.results.Unschedulable {
		c := s.owner[u.Pod.Namespace+"/"+u.Pod.Name]
		if c == nil || seen[c.Name()] {
			continue
		}
		seen[c.Name()] = true
		out = append(out, Blocked{Candidate: c, Block: Block{Kind: BlockedUnschedulable,
			Why: "pod " + u.Pod.Namespace + "/" + u.Pod.Name + " could not be rescheduled: " + u.Reason}})
	}
	return out
}

// nodeFree is the node's allocatable less its pods' requests, never negative.
func (r *Round) nodeFree(sn *scheduler.StateNode) scheduling.Resources {
	free := scheduling.FromList(sn.Node.Status.Allocatable)
	return free.Sub(r.podsOf(sn).used).Max(scheduling.Resources{})
}

// requests sums the candidates' reschedulable pods' requests.
func requests(cs []*Candidate) scheduling.Resources {
	var total scheduling.Resources
	for _, c := range cs {
		total = total.Add(c.Requests())
	}
	return total
}

// fitsRoughly reports whether need fits in free on CPU, memory and pods: a
// necessary condition for the pods to fit, cheap to check before a solve.
func fitsRoughly(need, free scheduling.Resources) bool {
	return need.CPU <= free.CPU && need.Memory <= free.Memory && need.Pods <= free.Pods
}
