// Package disruption removes nodes Stowage no longer needs, or must replace,
// without losing workloads. A Method (emptiness first; drift, expiration and
// consolidation later) is a pure decider: given a snapshot of the cluster
// state, the clock and the pools' disruption budgets, it returns Commands.
// The Controller runs the methods in order every Interval and executes the
// Commands of the first method that returns any: it marks the nodes for
// deletion in the cluster state and deletes their NodeClaims, after which
// the termination controller drains and terminates them.
package disruption

import (
	"cmp"
	"context"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/termination"
)

// Method is one way of disrupting nodes.
//
// A round asks ShouldDisrupt about every candidate, blocked ones included,
// then calls ComputeCommands once with those it accepted that are not
// blocked, even when there are none: a method that keeps memory across
// rounds (Emptiness remembers since when each node is empty) may forget the
// nodes it was not asked about. Methods are not safe for concurrent use; the
// Controller runs one round at a time.
type Method interface {
	// Name identifies the method in logs and metrics, e.g. "emptiness".
	Name() string
	// Reason is the disruption reason the method acts for, as budgets name
	// it (v1alpha1.DisruptionReasonEmpty, ...).
	Reason() string
	// ShouldDisrupt reports whether the method would act on the candidate
	// were nothing to block it.
	ShouldDisrupt(c *Candidate) bool
	// ComputeCommands picks, among candidates the method accepted, what to
	// do now without exceeding budgets. It must be deterministic: the same
	// candidates and budgets give the same Commands in the same order. An
	// error means the method could not decide; nothing is executed.
	ComputeCommands(ctx context.Context, budgets Budgets, candidates []*Candidate) ([]Command, error)
	// Waiting reports whether the method carries candidates from round to
	// round (a node waiting out consolidateAfter): while it does, every round
	// runs, even on an unchanged cluster state.
	Waiting() bool
}

// Candidate is a node Stowage manages that a method may disrupt: it has a
// NodeClaim that is Ready and a Node that is Ready, it is not being deleted,
// and its NodePool exists.
type Candidate struct {
	*scheduler.StateNode
	// NodePool is the node's pool, with the defaults applied.
	NodePool *v1alpha1.NodePool
	// ReschedulablePods are the pods that would need a new home: every pod
	// but DaemonSet pods, mirror pods, and pods that are finished or being
	// deleted.
	ReschedulablePods []*corev1.Pod
	// BlockedBy says why the node must not be disrupted voluntarily, e.g. a
	// do-not-disrupt pod; empty when it may be.
	BlockedBy string
}

// Command is what a method decided to do.
type Command struct {
	// Reason is the method's disruption reason.
	Reason string
	// Candidates are the nodes whose NodeClaims are deleted, in order.
	Candidates []*Candidate
}

// NewCandidates returns the candidates among nodes, sorted by name. pools is
// NodePool name -> pool with the defaults applied. A node chosen for pending
// pods (Nominated) is not a candidate: it is about to take them.
func NewCandidates(nodes []*scheduler.StateNode, pools map[string]*v1alpha1.NodePool) []*Candidate {
	var out []*Candidate
	for _, sn := range nodes {
		if !managed(sn) || !initialized(sn) || !nodeReady(sn.Node) || sn.MarkedForDeletion || sn.Nominated {
			continue
		}
		pool, ok := pools[sn.NodeClaim.Labels[v1alpha1.LabelNodePool]]
		if !ok {
			continue
		}
		c := &Candidate{StateNode: sn, NodePool: pool, BlockedBy: blockedBy(sn)}
		for _, p := range sn.Pods {
			if reschedulable(p) {
				c.ReschedulablePods = append(c.ReschedulablePods, p)
			}
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *Candidate) int { return strings.Compare(a.Name(), b.Name()) })
	return out
}

// DefaultedPools returns the pools by name, each a copy with its defaults
// applied, as the API server would have stored them: a pool built in memory
// (by the simulator, or a test) then behaves as one read from the cluster.
func DefaultedPools(pools []*v1alpha1.NodePool) map[string]*v1alpha1.NodePool {
	out := make(map[string]*v1alpha1.NodePool, len(pools))
	for _, p := range pools {
		d := p.DeepCopy()
		d.SetDefaults()
		out[d.Name] = d
	}
	return out
}

// managed: Stowage launched the node (it has a NodeClaim) and it registered.
func managed(sn *scheduler.StateNode) bool { return sn.NodeClaim != nil && sn.Node != nil }

// initialized: the claim is Ready, so the node has taken pods. A node still
// launching or initializing is neither a candidate nor counted by budgets.
func initialized(sn *scheduler.StateNode) bool {
	return meta.IsStatusConditionTrue(sn.NodeClaim.Status.Conditions, v1alpha1.ConditionReady)
}

func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// blockedBy returns why the node must not be disrupted: the node or one of
// its pods asks not to be, through Stowage's annotation or Karpenter's.
func blockedBy(sn *scheduler.StateNode) string {
	if doNotDisrupt(sn.Node.Annotations) {
		return "node " + sn.Node.Name + " is annotated do-not-disrupt"
	}
	for _, p := range sn.Pods {
		if termination.DoNotDisrupt(p) && !finished(p) {
			return "pod " + p.Namespace + "/" + p.Name + " is annotated do-not-disrupt"
		}
	}
	return ""
}

func doNotDisrupt(annotations map[string]string) bool {
	return annotations[v1alpha1.AnnotationDoNotDisrupt] == "true" ||
		annotations[v1alpha1.AnnotationKarpenterDoNotDisrupt] == "true"
}

// reschedulable: the pod would have to run elsewhere were the node removed.
func reschedulable(p *corev1.Pod) bool {
	return !finished(p) && p.DeletionTimestamp == nil && !ownedByDaemonSet(p) && !isMirror(p)
}

func finished(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

func isMirror(p *corev1.Pod) bool {
	_, ok := p.Annotations[corev1.MirrorPodAnnotationKey]
	return ok
}

func ownedByDaemonSet(p *corev1.Pod) bool {
	for _, ref := range p.OwnerReferences {
		if ref.Kind == "DaemonSet" && ref.Controller != nil && *ref.Controller {
			return true
		}
	}
	return false
}

// byAge orders candidates oldest NodeClaim first, then by name.
func byAge(a, b *Candidate) int {
	return cmp.Or(
		a.NodeClaim.CreationTimestamp.Time.Compare(b.NodeClaim.CreationTimestamp.Time),
		strings.Compare(a.Name(), b.Name()),
	)
}
