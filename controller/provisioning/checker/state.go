package checker

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// node is an existing node, an in-flight NodeClaim or a new NodeClaim in the final state.
type node struct {
	name string
	pool string
	// labels: for an existing node its labels; for a new claim the pool's template
	// labels, the keys its requirements pin, its nodepool and its hostname.
	labels map[string]string
	taints []corev1.Taint
	// allocatable of an existing node; nil when unknown.
	allocatable res
	pods        []*podAt
	// state is set for existing nodes, claim and claimReqs for new NodeClaims.
	state     *scheduler.StateNode
	claim     *scheduler.NewNodeClaim
	claimReqs apiReqs
	poolReqs  apiReqs
	// variants are every node the launch could produce: one per listed instance
	// type and allowed offering.
	variants []variant
}

// variant is one node a new claim's launch could produce.
type variant struct {
	it *cloudprovider.InstanceType
	// offering is nil when the type has no allowed offering (already reported).
	offering *cloudprovider.Offering
}

func (n *node) isNew() bool { return n.claim != nil }

// buildExisting adds the existing nodes and in-flight NodeClaims with their bound pods.
func (c *checker) buildExisting() {
	for _, sn := range c.snap.Nodes {
		n := &node{name: sn.Name(), state: sn}
		switch {
		case sn.Node != nil:
			n.labels, n.taints = sn.Node.Labels, settledTaints(sn)
			n.allocatable = nonEmpty(sn.Node.Status.Allocatable)
		default:
			n.labels = mergeLabels(sn.NodeClaim.Labels, apiReqs(sn.NodeClaim.Spec.Requirements).pinned())
			n.taints = sn.NodeClaim.Spec.Taints
			n.allocatable = nonEmpty(sn.NodeClaim.Status.Allocatable)
		}
		n.pool = n.labels[v1alpha1.LabelNodePool]
		for _, p := range sn.Pods {
			n.pods = append(n.pods, &podAt{pod: p, node: n})
		}
		c.addNode(n)
	}
}

// settledTaints are the taints a registered node will have once it takes
// pods: a node whose claim is not Initialized yet sheds its startup taints
// and the taints of a node coming up (not-ready, unreachable, unregistered,
// and the cordon it keeps until its DaemonSet pods are bound). The
// unschedulable taint only mirrors spec.unschedulable, on any node.
func settledTaints(sn *scheduler.StateNode) []corev1.Taint {
	shed := []string{corev1.TaintNodeUnschedulable}
	var startup []corev1.Taint
	if sn.NodeClaim != nil && !meta.IsStatusConditionTrue(sn.NodeClaim.Status.Conditions, v1alpha1.ConditionInitialized) {
		shed = append(shed, corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable, v1alpha1.TaintKeyUnregistered)
		startup = sn.NodeClaim.Spec.StartupTaints
	}
	return slices.DeleteFunc(slices.Clone(sn.Node.Spec.Taints), func(t corev1.Taint) bool {
		return slices.Contains(shed, t.Key) || slices.ContainsFunc(startup, func(s corev1.Taint) bool { return s.MatchTaint(&t) })
	})
}

func nonEmpty(rl corev1.ResourceList) res {
	if len(rl) == 0 {
		return nil
	}
	return fromList(rl)
}

func (c *checker) addNode(n *node) {
	if _, dup := c.byName[n.name]; dup {
		c.report(nil, n.name, ConstraintPlacement, "node name %s is used twice", n.name)
	}
	c.byName[n.name] = n
	c.nodes = append(c.nodes, n)
	c.pods = append(c.pods, n.pods...)
}

// buildClaims adds the new NodeClaims, their possible launches and their pods.
func (c *checker) buildClaims() {
	for _, nc := range c.res.NewNodeClaims {
		n := &node{name: nc.Name, pool: nc.NodePool, claim: nc, claimReqs: apiReqs(nc.Requirements.API())}
		pool, ok := c.pools[nc.NodePool]
		if !ok {
			c.report(nil, nc.Name, ConstraintPlacement, "nodepool %q does not exist", nc.NodePool)
			pool = &v1alpha1.NodePool{}
		}
		n.poolReqs = pool.Spec.Template.Spec.Requirements
		n.taints = pool.Spec.Template.Spec.Taints
		n.labels = mergeLabels(pool.Spec.Template.ObjectMeta.Labels, n.claimReqs.pinned(),
			map[string]string{v1alpha1.LabelNodePool: nc.NodePool, corev1.LabelHostname: nc.Name})
		if len(nc.InstanceTypes) == 0 {
			c.report(nil, nc.Name, ConstraintOffering, "nodeclaim lists no instance type")
		}
		for _, it := range nc.InstanceTypes {
			c.addVariants(n, it)
		}
		c.checkClaimOffering(n)
		for _, p := range nc.Pods {
			n.pods = append(n.pods, &podAt{pod: p, node: n, placed: true})
		}
		c.addNode(n)
	}
}

// addVariants checks one listed instance type against the pool and the claim and
// records every launch it allows.
func (c *checker) addVariants(n *node, it *cloudprovider.InstanceType) {
	if !c.poolTypes[n.pool][it.Name] {
		c.report(nil, n.name, ConstraintOffering, "instance type %s is not offered to nodepool %s", it.Name, n.pool)
	}
	for _, key := range sortedKeys(c.labelsOf(it)) {
		v := c.labelsOf(it)[key]
		if !n.claimReqs.allows(key, v, true) || !n.poolReqs.allows(key, v, true) {
			c.report(nil, n.name, ConstraintRequirements, "instance type %s has %s=%s, which the claim's or nodepool's requirements exclude", it.Name, key, v)
		}
	}
	before := len(n.variants)
	for i := range it.Offerings {
		if o := &it.Offerings[i]; c.offeringAllowed(n, it, o) {
			n.variants = append(n.variants, variant{it: it, offering: o})
		}
	}
	if len(n.variants) == before {
		c.report(nil, n.name, ConstraintOffering, "instance type %s has no available offering in the zones and capacity types the claim allows (%s)", it.Name, n.claim.Requirements)
		n.variants = append(n.variants, variant{it: it})
	}
}

// offeringAllowed reports whether an offering is available and allowed by the
// claim, the pool and the type's own zone and capacity-type sets.
func (c *checker) offeringAllowed(n *node, it *cloudprovider.InstanceType, o *cloudprovider.Offering) bool {
	if !o.Available {
		return false
	}
	for _, kv := range [][2]string{{corev1.LabelTopologyZone, o.Zone}, {v1alpha1.LabelCapacityType, o.CapacityType}} {
		if !n.claimReqs.allows(kv[0], kv[1], true) || !n.poolReqs.allows(kv[0], kv[1], true) || !typeAllows(it, kv[0], kv[1]) {
			return false
		}
	}
	return true
}

// checkClaimOffering verifies the claim's priced offering is an allowed offering of its first type.
func (c *checker) checkClaimOffering(n *node) {
	nc := n.claim
	if len(nc.InstanceTypes) == 0 {
		return
	}
	first := nc.InstanceTypes[0]
	for _, v := range n.variants {
		if v.it == first && v.offering != nil && v.offering.Zone == nc.Offering.Zone &&
			v.offering.CapacityType == nc.Offering.CapacityType && v.offering.Price == nc.Offering.Price {
			return
		}
	}
	c.report(nil, n.name, ConstraintOffering, "priced offering %s/%s at %.4f is not an allowed available offering of %s",
		nc.Offering.Zone, nc.Offering.CapacityType, nc.Offering.Price, first.Name)
}

// variantNode builds the node a launch would produce, for the label matchers.
func (c *checker) variantNode(n *node, v variant) *corev1.Node {
	labels := mergeLabels(c.labelsOf(v.it), n.labels)
	if v.offering != nil {
		labels[corev1.LabelTopologyZone] = v.offering.Zone
		labels[v1alpha1.LabelCapacityType] = v.offering.CapacityType
	}
	// A launched node carries Karpenter's selector labels too (stowage run's default).
	return fakeNode(n.name, mergeLabels(labels, v1alpha1.KarpenterSelectorLabels(labels)))
}

// describe names a variant for messages.
func (v variant) describe() string {
	if v.offering == nil {
		return fmt.Sprintf("instance type %s", v.it.Name)
	}
	return fmt.Sprintf("instance type %s in %s (%s)", v.it.Name, v.offering.Zone, v.offering.CapacityType)
}

// existingNode returns the node object of an existing node for the matchers.
func (n *node) existingNode() *corev1.Node {
	if n.state != nil && n.state.Node != nil {
		return n.state.Node
	}
	return fakeNode(n.name, n.labels)
}

// placeOnExisting adds the decision's placements onto existing nodes.
func (c *checker) placeOnExisting() {
	for _, pl := range c.res.Existing {
		n, ok := c.byName[pl.Node]
		if !ok || n.isNew() {
			c.report(pl.Pod, pl.Node, ConstraintPlacement, "pod is placed on node %s, which is not an existing node or in-flight NodeClaim", pl.Node)
			continue
		}
		if n.state.MarkedForDeletion {
			c.report(pl.Pod, pl.Node, ConstraintPlacement, "pod is placed on node %s, which is marked for deletion", pl.Node)
		}
		at := &podAt{pod: pl.Pod, node: n, placed: true}
		n.pods = append(n.pods, at)
		c.pods = append(c.pods, at)
	}
}
