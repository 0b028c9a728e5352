package state

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// stateNode is what the view knows of one machine: its Node, its NodeClaim,
// or both once the claim's provider id matches the node's.
type stateNode struct {
	node  *corev1.Node
	claim *v1alpha1.NodeClaim
	// marked is set by MarkForDeletion: a decider is about to remove the node.
	marked bool
	// nominatedUntil is when the window of a nomination to the node that
	// lapsed ends (see NominationGrace); zero when there is none.
	nominatedUntil time.Time
}

func (n *stateNode) empty() bool { return n.node == nil && n.claim == nil }

// view is what a snapshot adds to each node, by node or claim name.
type view struct {
	// bound pods by node name; pods nominated by node or claim name
	bound, nominated map[string][]*corev1.Pod
	// podEvents is node name -> when a pod last bound to it or left it
	podEvents map[string]time.Time
}

// snapshot renders the node for the scheduler with its bound pods (by node
// name) and the pods nominated to it (by claim or node name).
func (n *stateNode) snapshot(v view) *scheduler.StateNode {
	sn := &scheduler.StateNode{Node: n.node, NodeClaim: n.claim, MarkedForDeletion: n.markedForDeletion()}
	if n.node != nil {
		sn.Pods = append(sn.Pods, v.bound[n.node.Name]...)
		sn.Pods = append(sn.Pods, v.nominated[n.node.Name]...)
		sn.LastPodEvent = v.podEvents[n.node.Name]
	}
	if n.claim != nil && (n.node == nil || n.claim.Name != n.node.Name) {
		sn.Pods = append(sn.Pods, v.nominated[n.claim.Name]...)
	}
	return sn
}

func (n *stateNode) markedForDeletion() bool {
	return n.marked ||
		(n.node != nil && n.node.DeletionTimestamp != nil) ||
		(n.claim != nil && n.claim.DeletionTimestamp != nil)
}

// nodeKey files a node by provider id, or by name until it has one.
func nodeKey(node *corev1.Node) string {
	if node.Spec.ProviderID != "" {
		return node.Spec.ProviderID
	}
	return "node/" + node.Name
}

// claimKey files a claim by provider id, or by name until it has launched.
func claimKey(claim *v1alpha1.NodeClaim) string {
	if claim.Status.ProviderID != "" {
		return claim.Status.ProviderID
	}
	return "nodeclaim/" + claim.Name
}

// UpdateNode records a Node, joining it to the NodeClaim with its provider id.
func (c *Cluster) UpdateNode(node *corev1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	k := nodeKey(node)
	marked := false
	if old, ok := c.nodeKeys[node.Name]; ok && old != k {
		marked = c.detach(old, func(n *stateNode) { n.node = nil })
	}
	c.nodeKeys[node.Name] = k
	n := c.entry(k)
	n.node, n.marked = node, n.marked || marked
}

// DeleteNode forgets a Node; its NodeClaim, if any, stays.
func (c *Cluster) DeleteNode(node *corev1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if k, ok := c.nodeKeys[node.Name]; ok {
		c.detach(k, func(n *stateNode) { n.node = nil })
		delete(c.nodeKeys, node.Name)
	}
	delete(c.podEvents, node.Name)
	c.dropNominations(node.Name)
}

// UpdateNodeClaim records a NodeClaim seen by a feeder, joining it to the Node
// with its provider id once it has launched.
func (c *Cluster) UpdateNodeClaim(claim *v1alpha1.NodeClaim) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.updateClaim(claim)
	delete(c.created, claim.Name)
}

// NodeClaimCreated records a NodeClaim this process has just created, before
// the feeders see it, so that the next decision counts it at once. Synced
// stays false until a feeder has seen it too (or DefaultCreatedClaimTimeout
// passes). A claim a feeder has already delivered, or seen deleted, is left
// as the feeder saw it: that copy is as new as the one Create returned or
// newer (in a batch of hundreds, the first claims launch and register, or
// fail and go, before the last is created).
func (c *Cluster) NodeClaimCreated(claim *v1alpha1.NodeClaim) {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, seen := c.claimKeys[claim.Name]
	if _, deleted := c.deletedClaims[claim.Name]; seen || deleted {
		return
	}
	c.gen++
	c.created[claim.Name] = c.clk.Now()
	c.updateClaim(claim)
}

func (c *Cluster) updateClaim(claim *v1alpha1.NodeClaim) {
	k := claimKey(claim)
	marked := false
	if old, ok := c.claimKeys[claim.Name]; ok && old != k {
		marked = c.detach(old, func(n *stateNode) { n.claim = nil })
	}
	c.claimKeys[claim.Name] = k
	n := c.entry(k)
	n.claim, n.marked = claim, n.marked || marked
}

// DeleteNodeClaim forgets a NodeClaim and the pods nominated to it; its Node,
// if any, stays until deleted.
func (c *Cluster) DeleteNodeClaim(claim *v1alpha1.NodeClaim) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if k, ok := c.claimKeys[claim.Name]; ok {
		c.detach(k, func(n *stateNode) { n.claim = nil })
		delete(c.claimKeys, claim.Name)
	}
	delete(c.created, claim.Name)
	c.deletedClaims[claim.Name] = c.clk.Now()
	c.dropNominations(claim.Name)
}

// MarkForDeletion marks nodes or claims, by name, as about to be removed: the
// scheduler puts no new pods on them.
func (c *Cluster) MarkForDeletion(names ...string) { c.setMarked(true, names) }

// UnmarkForDeletion clears MarkForDeletion, e.g. when a disruption is abandoned.
func (c *Cluster) UnmarkForDeletion(names ...string) { c.setMarked(false, names) }

func (c *Cluster) setMarked(marked bool, names []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for _, name := range names {
		if n := c.find(name); n != nil {
			n.marked = marked
		}
	}
}

// find looks a state node up by claim name, then by node name.
func (c *Cluster) find(name string) *stateNode {
	if k, ok := c.claimKeys[name]; ok {
		return c.nodes[k]
	}
	if k, ok := c.nodeKeys[name]; ok {
		return c.nodes[k]
	}
	return nil
}

func (c *Cluster) entry(k string) *stateNode {
	n, ok := c.nodes[k]
	if !ok {
		n = &stateNode{}
		c.nodes[k] = n
	}
	return n
}

// detach clears part of the node filed under k, drops the node when nothing
// is left, and returns whether it was marked for deletion.
func (c *Cluster) detach(k string, clear func(*stateNode)) bool {
	n, ok := c.nodes[k]
	if !ok {
		return false
	}
	clear(n)
	if n.empty() {
		delete(c.nodes, k)
	}
	return n.marked
}
