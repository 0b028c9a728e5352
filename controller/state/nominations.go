package state

import (
	"cmp"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// NominationGrace is how long kube-scheduler has to bind a nominated pod once
// it could: from the later of the nomination and its target's Node becoming
// Ready. After that the node may have filled with other pods, or
// kube-scheduler may see it differently than the plan did, so the pod needs
// capacity again. A node stays nominated for another NominationGrace after a
// nomination to it lapses, so that the batch the lapse wakes can plan the pod
// again before the node looks empty.
const NominationGrace = 10 * time.Second

// nomination is where a pending pod is expected to land, and since when.
type nomination struct {
	// target is a NodeClaim or Node name.
	target string
	at     time.Time
}

// Nominate records that pod is expected to land on target, a NodeClaim or
// node name, so that the next decision counts it there instead of launching
// capacity for it again. The nomination lasts until the pod binds or is
// deleted, the target goes away, or it lapses (see NominationGrace).
func (c *Cluster) Nominate(pod *corev1.Pod, target string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.nominations[key(pod)] = nomination{target: target, at: c.clk.Now()}
}

// IsNominated reports whether pod has a nomination that has not lapsed.
func (c *Cluster) IsNominated(pod *corev1.Pod) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	nom, ok := c.nominations[key(pod)]
	return ok && c.live(nom, c.clk.Now())
}

// LapseNominations forgets the nominations that have lapsed and ends the
// nominated windows of nodes that have passed, and returns the pending pods
// whose nomination lapsed (by namespace and name) and the next instant
// something is due to lapse (zero when nothing is). The provisioning
// controller calls it when nodes change and at that instant, and plans the
// returned pods again: nothing else would, for kube-scheduler does not touch
// a pod it has already found unschedulable until the cluster changes.
func (c *Cluster) LapseNominations() ([]*corev1.Pod, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clk.Now()
	var lapsed []*corev1.Pod
	var next time.Time
	changed := false
	// In map order, sorting only what lapsed: this runs whenever nodes
	// change, over every nomination of a burst, and nothing else it does
	// depends on the order. Each target is looked at once (a burst nominates
	// thousands of pods to each few hundred claims).
	targets := map[string]targetLapse{}
	for k, nom := range c.nominations {
		p, tracked := c.pods[k]
		if tracked && p.Spec.NodeName != "" {
			continue // a pod's next home while its node drains: it has a node
		}
		t, seen := targets[nom.target]
		if !seen {
			t = c.targetLapse(nom.target)
			targets[nom.target] = t
		}
		at, known := t.lapseAt(nom)
		if !known {
			continue
		}
		if now.Before(at) {
			next = earliest(next, at)
			continue
		}
		delete(c.nominations, k)
		changed = true
		if n := c.find(nom.target); n != nil {
			n.nominatedUntil = later(n.nominatedUntil, at.Add(NominationGrace))
		}
		if tracked && pending(p) {
			lapsed = append(lapsed, p)
		}
	}
	slices.SortFunc(lapsed, func(a, b *corev1.Pod) int { return cmp.Compare(key(a), key(b)) })
	ended, until := c.endNominatedWindows(now)
	if changed || ended {
		c.gen++
	}
	if !until.IsZero() {
		next = earliest(next, until)
	}
	return lapsed, next
}

// endNominatedWindows clears the nominated windows that have passed, and
// returns whether any did and when the next one ends. c.mu is held.
func (c *Cluster) endNominatedWindows(now time.Time) (bool, time.Time) {
	ended := false
	var next time.Time
	for _, n := range c.nodes {
		switch {
		case n.nominatedUntil.IsZero():
		case now.Before(n.nominatedUntil):
			next = earliest(next, n.nominatedUntil)
		default:
			n.nominatedUntil, ended = time.Time{}, true
		}
	}
	return ended, next
}

// live reports whether a nomination holds at now. c.mu is held.
func (c *Cluster) live(nom nomination, now time.Time) bool {
	at, known := c.lapseAt(nom)
	return !known || now.Before(at)
}

// lapseAt returns when a nomination lapses, or false while that is not known
// yet: its target has not registered a Node, or the Node is still coming up.
// A nomination lapses NominationGrace after the later of its making and its
// Node turning Ready; at once when its target is being removed, or its Node,
// once initialized, is not Ready: kube-scheduler binds nothing there. c.mu
// is held.
func (c *Cluster) lapseAt(nom nomination) (time.Time, bool) {
	return c.targetLapse(nom.target).lapseAt(nom)
}

// targetLapse is what decides when the nominations to a target lapse: the
// target gone or going, its node not registered or not Ready yet, or Ready
// since readySince.
type targetLapse struct {
	gone, ready, initialized, registered bool
	readySince                           time.Time
}

// targetLapse reads a target's state for lapseAt. c.mu is held.
func (c *Cluster) targetLapse(target string) targetLapse {
	n := c.find(target)
	switch {
	case n == nil || n.markedForDeletion():
		return targetLapse{gone: true}
	case n.node == nil:
		return targetLapse{}
	}
	ready, since := readySince(n.node)
	return targetLapse{registered: true, ready: ready, readySince: since, initialized: n.initialized()}
}

// lapseAt is when a nomination to the target lapses: at once when the target
// is gone or initialized without being Ready, NominationGrace after the later
// of the nomination and the node becoming Ready, and not known yet while the
// node has not registered or is initializing.
func (t targetLapse) lapseAt(nom nomination) (time.Time, bool) {
	switch {
	case t.gone:
		return nom.at, true
	case !t.registered:
		return time.Time{}, false
	case t.ready:
		return later(nom.at, t.readySince).Add(NominationGrace), true
	case t.initialized:
		return nom.at, true
	}
	return time.Time{}, false
}

// nominatedPods returns target name -> the pending pods with a live
// nomination to it, by namespace and name, and the nodes chosen for pods
// that have not landed: the pending pods' targets until their nomination has
// lapsed for NominationGrace, and the next homes of pods still running on a
// node being removed, however long the drain takes. c.mu is held.
func (c *Cluster) nominatedPods() (map[string][]*corev1.Pod, map[*stateNode]bool) {
	now := c.clk.Now()
	pods, chosen := map[string][]*corev1.Pod{}, map[*stateNode]bool{}
	for _, k := range slices.Sorted(maps.Keys(c.nominations)) {
		nom := c.nominations[k]
		p, ok := c.pods[k]
		if !ok || isTerminal(p) || p.DeletionTimestamp != nil {
			continue
		}
		if p.Spec.NodeName != "" {
			// Its next home, held while its node drains (see LapseNominations).
			if n := c.nextHome(p, nom); n != nil {
				chosen[n] = true
				moving := *p
				moving.Spec.NodeName = ""
				pods[nom.target] = append(pods[nom.target], &moving)
			}
			continue
		}
		at, known := c.lapseAt(nom)
		switch {
		case !known || now.Before(at):
			pods[nom.target] = append(pods[nom.target], p)
		case now.Before(at.Add(NominationGrace)):
			// Lapsed, and not yet planned again: the node is still chosen.
		default:
			continue
		}
		if n := c.find(nom.target); n != nil {
			chosen[n] = true
		}
	}
	return pods, chosen
}

// HasNextHome reports whether pod, running on a node being removed, was
// nominated to a node or claim that is not: its room there is counted in
// every snapshot, so the provisioner does not plan it again (which could
// launch a second node for it while the first is on its way).
func (c *Cluster) HasNextHome(pod *corev1.Pod) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	nom, ok := c.nominations[key(pod)]
	p, known := c.pods[key(pod)]
	return ok && known && c.nextHome(p, nom) != nil
}

// nextHome is the node or claim a running pod of a node being removed is
// nominated to, when that is not being removed too; nil otherwise. c.mu is
// held.
func (c *Cluster) nextHome(p *corev1.Pod, nom nomination) *stateNode {
	if p.Spec.NodeName == "" || p.DeletionTimestamp != nil || isTerminal(p) || p.Spec.NodeName == nom.target || !c.leaving(p.Spec.NodeName) {
		return nil
	}
	if n := c.find(nom.target); n != nil && !n.markedForDeletion() {
		return n
	}
	return nil
}

// dropNominations forgets the nominations to target. c.mu is held.
func (c *Cluster) dropNominations(target string) {
	for pod, nom := range c.nominations {
		if nom.target == target {
			delete(c.nominations, pod)
		}
	}
}

// initialized reports whether the node has been up: its NodeClaim is
// Initialized, or it has none (Stowage did not launch it, so it was up
// before Stowage saw it).
func (n *stateNode) initialized() bool {
	return n.claim == nil || meta.IsStatusConditionTrue(n.claim.Status.Conditions, v1alpha1.ConditionInitialized)
}

// readySince reports whether the node is Ready, and since when (zero when
// the condition does not say).
func readySince(node *corev1.Node) (bool, time.Time) {
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue, cond.LastTransitionTime.Time
		}
	}
	return false, time.Time{}
}

// pending reports whether a pod waits for a node.
func pending(p *corev1.Pod) bool {
	return p.Spec.NodeName == "" && !isTerminal(p) && p.DeletionTimestamp == nil
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
