package simulate

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// Preemption, as kube-scheduler's DefaultPreemption plugin does it (the
// "Pod Priority and Preemption" page, and pkg/scheduler/framework/plugins/
// defaultpreemption): a pod no node takes may evict pods of lower priority
// from one node, when that makes room for it there.
//   - A pod whose preemptionPolicy is Never preempts nobody; it only goes
//     ahead of lower priorities in the queue.
//   - On each node that passes the pod's other filters, every pod of lower
//     priority is a potential victim; if the pod does not fit with all of
//     them gone, the node is no candidate. Then as many as can stay are
//     reprieved, most important first (higher priority, then started
//     earlier), those whose eviction would break a PodDisruptionBudget
//     before the others: a PDB is respected as far as possible, but not
//     beyond (preemption still evicts when nothing else makes room).
//   - Among the candidates kube-scheduler picks the node with the fewest
//     PDB violations, then the lowest highest victim priority, then the
//     lowest sum of victim priorities, then the fewest victims, then the
//     latest start among its highest-priority victims, then the first.
//
// Victims are deleted at once (the simulator's terminating pods are gone at
// once), so the pod is bound to the node in the same pass; their workloads
// replace them. Pods with inter-pod constraints do not preempt here.

// candidate is a node where preemption makes room, and what it costs.
type candidate struct {
	node    *schedNode
	victims []*simPod // most important first
	// violations counts the victims whose eviction breaks a PDB.
	violations int
}

// canPreempt reports whether the pod's preemptionPolicy lets it preempt.
func canPreempt(pod *corev1.Pod) bool {
	return pod.Spec.PreemptionPolicy == nil || *pod.Spec.PreemptionPolicy != corev1.PreemptNever
}

// priority is the pod's priority, which the simulated admission always sets.
func priority(pod *corev1.Pod) int32 {
	if pod.Spec.Priority == nil {
		return 0
	}
	return *pod.Spec.Priority
}

// preempt finds the node where evicting lower-priority pods makes room for sp,
// evicts them and returns the node; nil when there is none.
func (w *world) preempt(ctx context.Context, nodes []*schedNode, sp *simPod, pdbs *pdbAllowance) (*schedNode, error) {
	if !canPreempt(sp.pod) {
		return nil, nil
	}
	var best *candidate
	affinity := nodeaffinity.GetRequiredNodeAffinity(sp.pod)
	for _, n := range nodes {
		if !matches(n, sp, affinity) {
			continue
		}
		if c := w.victimsOn(n, sp, pdbs); c != nil && (best == nil || c.better(best)) {
			best = c
		}
	}
	if best == nil {
		return nil, nil
	}
	for _, v := range best.victims {
		pdbs.take(v.pod)
		best.node.requested = best.node.requested.Sub(v.requests)
		if err := w.deletePod(ctx, v); err != nil {
			return nil, fmt.Errorf("preempting %s for %s: %w", v.key, sp.key, err)
		}
		w.preempted++
	}
	return best.node, nil
}

// victimsOn selects the fewest pods of the node to evict for sp, as
// kube-scheduler's SelectVictimsOnNode; nil when evicting them all would not
// make room.
func (w *world) victimsOn(n *schedNode, sp *simPod, pdbs *pdbAllowance) *candidate {
	p := priority(sp.pod)
	room := n.requested
	var lower []*simPod
	for _, v := range w.podsOn(n.node.Name) {
		if priority(v.pod) < p {
			lower = append(lower, v)
			room = room.Sub(v.requests)
		}
	}
	if len(lower) == 0 || !room.Add(sp.requests).Fits(n.allocatable) {
		return nil
	}
	slices.SortStableFunc(lower, func(a, b *simPod) int {
		return cmp.Or(cmp.Compare(priority(b.pod), priority(a.pod)), a.bound.Compare(b.bound))
	})
	violating, other := pdbs.split(lower)
	c := &candidate{node: n}
	reprieve := func(v *simPod) bool {
		if room.Add(v.requests).Add(sp.requests).Fits(n.allocatable) {
			room = room.Add(v.requests)
			return true
		}
		c.victims = append(c.victims, v)
		return false
	}
	for _, v := range violating {
		if !reprieve(v) {
			c.violations++
		}
	}
	for _, v := range other {
		reprieve(v)
	}
	slices.SortStableFunc(c.victims, func(a, b *simPod) int {
		return cmp.Or(cmp.Compare(priority(b.pod), priority(a.pod)), a.bound.Compare(b.bound))
	})
	return c
}

// better is pickOneNodeForPreemption's order.
func (c *candidate) better(o *candidate) bool {
	if c.violations != o.violations {
		return c.violations < o.violations
	}
	if hc, ho := priority(c.victims[0].pod), priority(o.victims[0].pod); hc != ho {
		return hc < ho
	}
	if sc, so := c.prioritySum(), o.prioritySum(); sc != so {
		return sc < so
	}
	if len(c.victims) != len(o.victims) {
		return len(c.victims) < len(o.victims)
	}
	return c.highestStart().After(o.highestStart())
}

// prioritySum adds the victims' priorities, each offset to be positive, as
// kube-scheduler does.
func (c *candidate) prioritySum() int64 {
	var sum int64
	for _, v := range c.victims {
		sum += int64(priority(v.pod)) + math.MaxInt32 + 1
	}
	return sum
}

// highestStart is the earliest start among the highest-priority victims.
func (c *candidate) highestStart() time.Time {
	start := c.victims[0].bound
	for _, v := range c.victims[1:] {
		if priority(v.pod) == priority(c.victims[0].pod) && v.bound.Before(start) {
			start = v.bound
		}
	}
	return start
}

// pdbAllowance is, per PodDisruptionBudget, the disruptions it still
// allows in this scheduling pass, as kube-scheduler counts them from the
// PDBs' status.
type pdbAllowance struct {
	pdbs    []*policyv1.PodDisruptionBudget
	allowed map[string]int32 // namespace/name -> disruptions allowed
}

func (w *world) pdbAllowance(ctx context.Context) (*pdbAllowance, error) {
	list := &policyv1.PodDisruptionBudgetList{}
	if err := w.kube.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing PodDisruptionBudgets for preemption: %w", err)
	}
	a := &pdbAllowance{allowed: map[string]int32{}}
	for i := range list.Items {
		pdb := &list.Items[i]
		a.pdbs = append(a.pdbs, pdb)
		a.allowed[pdb.Namespace+"/"+pdb.Name] = pdb.Status.DisruptionsAllowed
	}
	return a, nil
}

// matching lists the keys of the PDBs whose selector matches the pod.
func (a *pdbAllowance) matching(pod *corev1.Pod) []string {
	var out []string
	for _, pdb := range a.pdbs {
		if pdb.Namespace != pod.Namespace || pdb.Spec.Selector == nil {
			continue
		}
		if sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err == nil && sel.Matches(labels.Set(pod.Labels)) {
			out = append(out, pdb.Namespace+"/"+pdb.Name)
		}
	}
	return out
}

// split sorts the potential victims, in order, into those whose eviction
// would break a PDB and the others, counting each against a copy of the
// allowance as kube-scheduler's filterPodsWithPDBViolation does.
func (a *pdbAllowance) split(pods []*simPod) (violating, other []*simPod) {
	left := map[string]int32{}
	for _, v := range pods {
		broken := false
		for _, key := range a.matching(v.pod) {
			if _, seen := left[key]; !seen {
				left[key] = a.allowed[key]
			}
			left[key]--
			broken = broken || left[key] < 0
		}
		if broken {
			violating = append(violating, v)
		} else {
			other = append(other, v)
		}
	}
	return violating, other
}

// take counts an eviction against the pod's PDBs.
func (a *pdbAllowance) take(pod *corev1.Pod) {
	for _, key := range a.matching(pod) {
		a.allowed[key]--
	}
}
