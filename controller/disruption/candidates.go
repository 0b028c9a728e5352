package disruption

import (
	"cmp"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// Candidate is a node Stowage manages that a method may disrupt: it has a
// NodeClaim that is Initialized and a Node, it is not being deleted, and its
// NodePool exists. A Node that is not Ready is a candidate too (emptiness may
// remove it), but only Ready ones are consolidated or replaced.
type Candidate struct {
	*scheduler.StateNode
	// NodePool is the node's pool, with the defaults applied.
	NodePool *v1alpha1.NodePool
	// block and pods are worked out when first asked for: a round asks
	// most candidates about few things.
	block, pacedBlock *Block
	pods              *nodePods
	round             *Round
	// Ready is the Node's Ready condition. A node that is not Ready already
	// counts against its pool's budgets as being disrupted.
	Ready bool
	// Offering is the node's instance type, zone and capacity type, from its
	// labels, with its hourly price when the pool still offers it.
	Offering NodeOffering
	// QuietSince is since when no pod has bound to the node or left it (its
	// initialization when none has): what consolidateAfter is counted from.
	QuietSince time.Time
}

// NodeOffering is what a node runs on and what it costs.
type NodeOffering struct {
	InstanceType, Zone, CapacityType string
	// Price is in dollars per hour; PriceKnown is false when the node's
	// offering is not among its pool's (its type was removed, say).
	Price      float64
	PriceKnown bool
}

// Block is why a candidate must not be disrupted now.
type Block struct {
	// Kind is the metric label of the blocker: one of the Blocked... constants.
	Kind string
	// Why is a sentence fragment such as "pod default/web is annotated
	// do-not-disrupt".
	Why string
	// Until is when the block ends by itself (a do-not-disrupt duration, a
	// node just Ready); zero when only a change in the cluster ends it.
	Until time.Time
}

// Blocker kinds, the values of the blocked-candidates metric's blocker label.
const (
	BlockedDoNotDisrupt  = "do-not-disrupt"
	BlockedPDB           = "pdb"
	BlockedNominated     = "nominated"
	BlockedJustReady     = "just-ready"
	BlockedBudget        = "budget"
	BlockedUnschedulable = "unschedulable"
	BlockedChurn         = "churn"
)

// NewCandidates returns the candidates among the round's nodes, sorted by
// name.
func NewCandidates(r *Round) []*Candidate {
	var out []*Candidate
	for _, sn := range r.Snapshot.Nodes {
		if !managed(sn) || !initialized(sn) || sn.MarkedForDeletion {
			continue
		}
		pool, ok := r.Pools[sn.NodeClaim.Labels[v1alpha1.LabelNodePool]]
		if !ok {
			continue
		}
		c := &Candidate{StateNode: sn, NodePool: pool, Ready: nodeReady(sn.Node), Offering: r.offering(pool.Name, sn.Node), round: r}
		c.QuietSince = quietSince(sn)
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *Candidate) int { return strings.Compare(a.Name(), b.Name()) })
	return out
}

// ReschedulablePods are the pods that would need a new home: every pod but
// DaemonSet pods, mirror pods, and pods that are finished or being deleted.
func (c *Candidate) ReschedulablePods() []*corev1.Pod { return c.podSummary().reschedulable }

func (c *Candidate) podSummary() *nodePods {
	if c.pods == nil {
		c.pods = c.round.podsOf(c.StateNode)
	}
	return c.pods
}

// Empty reports whether the node runs no pod that would need a new home.
func (c *Candidate) Empty() bool { return len(c.ReschedulablePods()) == 0 }

// Blocked says why no method may disrupt the node now (see blockedBy); a
// zero Block when nothing does.
func (c *Candidate) Blocked() Block { return c.blocked(&c.block, false) }

// BlockedPaced is Blocked for a Paced method: a PodDisruptionBudget that
// paces evictions does not block.
func (c *Candidate) BlockedPaced() Block { return c.blocked(&c.pacedBlock, true) }

func (c *Candidate) blocked(memo **Block, paced bool) Block {
	if *memo == nil {
		b := blockedBy(c, c.round.pdbs(), paced, c.round.Now)
		*memo = &b
	}
	return **memo
}

// Requests sums the reschedulable pods' requests.
func (c *Candidate) Requests() scheduling.Resources {
	return c.podSummary().moving
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

// initialized: the claim is Initialized, so the node has taken pods. A node
// still launching or initializing is neither a candidate nor counted by
// budgets.
func initialized(sn *scheduler.StateNode) bool {
	return meta.IsStatusConditionTrue(sn.NodeClaim.Status.Conditions, v1alpha1.ConditionInitialized) ||
		meta.IsStatusConditionTrue(sn.NodeClaim.Status.Conditions, v1alpha1.ConditionReady)
}

// quietSince is the latest of the node's last pod event (in the cluster
// state's memory, or on its claim's status, which outlives a change of
// leader) and its initialization.
func quietSince(sn *scheduler.StateNode) time.Time {
	since := maxTime(sn.LastPodEvent, sn.NodeClaim.Status.LastPodEventTime.Time)
	for _, t := range []string{v1alpha1.ConditionInitialized, v1alpha1.ConditionReady} {
		if cond := meta.FindStatusCondition(sn.NodeClaim.Status.Conditions, t); cond != nil && cond.Status == "True" {
			since = maxTime(since, cond.LastTransitionTime.Time)
			break
		}
	}
	return since
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
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
