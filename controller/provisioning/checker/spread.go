package checker

import (
	"fmt"
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// spreadGroup counts the pods a spread selector matches per eligible domain as
// the replay places them one by one.
type spreadGroup struct {
	key       string
	namespace string
	selector  labels.Selector
	policy    spreadPolicy
	// owner is a pod whose constraint defines the group: eligibility of nodes is
	// judged against its node affinity and tolerations.
	owner *corev1.Pod
	// domain -> matching pods on eligible nodes of the domain
	counts map[string]int
	// domain -> eligible
	domains map[string]bool
	// least is the smallest count over eligible domains, atLeast how many domains
	// hold it; counts only grow, so it is recomputed only when atLeast reaches 0.
	least, atLeast int
}

// min is the smallest count over eligible domains; 0 with fewer than minDomains.
func (g *spreadGroup) min(minDomains *int32) int {
	if len(g.domains) == 0 || (minDomains != nil && len(g.domains) < int(*minDomains)) {
		return 0
	}
	return g.least
}

// recount sets least and atLeast from the counts.
func (g *spreadGroup) recount() {
	g.least, g.atLeast = math.MaxInt, 0
	for d := range g.domains {
		switch c := g.counts[d]; {
		case c < g.least:
			g.least, g.atLeast = c, 1
		case c == g.least:
			g.atLeast++
		}
	}
}

// add counts one more matching pod in domain d.
func (g *spreadGroup) add(d string) {
	g.counts[d]++
	if g.domains[d] && g.counts[d] == g.least+1 {
		if g.atLeast--; g.atLeast == 0 {
			g.recount()
		}
	}
}

// spreadPolicy says which nodes are eligible domains for a pod's constraint.
type spreadPolicy struct {
	honorAffinity, honorTaints bool
}

func policyOf(tsc *corev1.TopologySpreadConstraint) spreadPolicy {
	return spreadPolicy{
		honorAffinity: tsc.NodeAffinityPolicy == nil || *tsc.NodeAffinityPolicy == corev1.NodeInclusionPolicyHonor,
		honorTaints:   tsc.NodeTaintsPolicy != nil && *tsc.NodeTaintsPolicy == corev1.NodeInclusionPolicyHonor,
	}
}

// signature identifies what of the pod the policy makes eligibility depend on.
func (sp spreadPolicy) signature(pod *corev1.Pod) string {
	sig := ""
	if sp.honorAffinity && hasNodeConstraints(pod) {
		var affinity *corev1.NodeAffinity
		if pod.Spec.Affinity != nil {
			affinity = pod.Spec.Affinity.NodeAffinity
		}
		sig += fmt.Sprintf("aff%v%v", pod.Spec.NodeSelector, affinity)
	}
	if sp.honorTaints {
		sig += fmt.Sprintf("tol%v", pod.Spec.Tolerations)
	}
	return sig
}

func (sp spreadPolicy) eligible(c *checker, pod *corev1.Pod, n *node) bool {
	if sp.honorAffinity && !c.nodeAccepts(pod, n) {
		return false
	}
	if _, blocked := untolerated(pod.Spec.Tolerations, n.taints); sp.honorTaints && blocked {
		return false
	}
	return true
}

// checkTopologySpread replays the decision's placements in its Order and
// checks every DoNotSchedule spread constraint of each pod against the pods
// bound or placed before it, as kube-scheduler's PodTopologySpread filter does
// when the pods bind in that order.
func (c *checker) checkTopologySpread() {
	groups := map[string]*spreadGroup{}
	var all []*spreadGroup
	// constraint of a placed pod -> its group
	type owned struct {
		at    *podAt
		tsc   *corev1.TopologySpreadConstraint
		group *spreadGroup
	}
	byPod := map[*corev1.Pod][]owned{}
	for _, at := range c.pods {
		if !at.placed {
			continue
		}
		for i := range at.pod.Spec.TopologySpreadConstraints {
			tsc := &at.pod.Spec.TopologySpreadConstraints[i]
			if tsc.WhenUnsatisfiable != corev1.DoNotSchedule {
				continue
			}
			sel, err := selectorFor(at.pod, tsc.LabelSelector, tsc.MatchLabelKeys, nil)
			if err != nil {
				c.report(at.pod, at.node.name, ConstraintTopologySpread, "%v", err)
				continue
			}
			sp := policyOf(tsc)
			key := fmt.Sprintf("%s|%s|%s|%s", tsc.TopologyKey, at.pod.Namespace, sel, sp.signature(at.pod))
			g, ok := groups[key]
			if !ok {
				g = c.newSpreadGroup(at.pod, tsc.TopologyKey, sel, sp)
				groups[key] = g
				all = append(all, g)
			}
			byPod[at.pod] = append(byPod[at.pod], owned{at, tsc, g})
		}
	}
	// The bound pods are there before the replay starts; kube-scheduler's
	// spreads skip the terminating ones (podtopologyspread/common.go).
	for _, at := range c.pods {
		if !at.placed && at.pod.DeletionTimestamp == nil {
			c.countSpread(at, all)
		}
	}
	for _, g := range all {
		g.recount()
	}
	for _, at := range c.ordered() {
		for _, o := range byPod[at.pod] {
			c.checkSpread(o.at, o.tsc, o.group)
		}
		c.countSpread(at, all)
	}
}

// ordered returns the placed pods in the decision's Order.
func (c *checker) ordered() []*podAt {
	byPod := map[*corev1.Pod]*podAt{}
	for _, at := range c.pods {
		if at.placed {
			byPod[at.pod] = at
		}
	}
	out := make([]*podAt, 0, len(byPod))
	for _, p := range c.res.Order {
		if at, ok := byPod[p]; ok {
			out = append(out, at)
		}
	}
	return out
}

// countSpread adds a pod to every group whose selector matches it, on an
// eligible node with a domain.
func (c *checker) countSpread(at *podAt, groups []*spreadGroup) {
	for _, g := range groups {
		if at.pod.Namespace != g.namespace || !g.selector.Matches(labels.Set(at.pod.Labels)) {
			continue
		}
		d, hasDomain := c.domain(at.node, g.key)
		if !hasDomain {
			if at.node.isNew() && mustPin(g.key) {
				c.reportUnpinned(at.node, at.pod, g.key, ConstraintTopologySpread)
			}
			continue
		}
		if g.policy.eligible(c, g.owner, at.node) {
			g.add(d)
		}
	}
}

func (c *checker) checkSpread(at *podAt, tsc *corev1.TopologySpreadConstraint, g *spreadGroup) {
	d, ok := c.domain(at.node, tsc.TopologyKey)
	if !ok {
		c.reportMissingDomain(at, tsc.TopologyKey, ConstraintTopologySpread)
		return
	}
	self := 0
	if g.selector.Matches(labels.Set(at.pod.Labels)) {
		self = 1
	}
	lo := g.min(tsc.MinDomains)
	if skew := g.counts[d] + self - lo; skew > int(tsc.MaxSkew) {
		c.report(at.pod, at.node.name, ConstraintTopologySpread,
			"spread on %s (selector %q): domain %s has %d matching pods before this one, the least of %d eligible domains has %d: skew %d > maxSkew %d",
			tsc.TopologyKey, g.selector, d, g.counts[d], len(g.domains), lo, skew, tsc.MaxSkew)
	}
}

// reportMissingDomain reports a pod whose node has no value for a topology key.
func (c *checker) reportMissingDomain(at *podAt, key string, constraint Constraint) {
	if at.node.isNew() && mustPin(key) {
		c.reportUnpinned(at.node, at.pod, key, constraint)
		return
	}
	c.report(at.pod, at.node.name, constraint, "node has no %s label, so it is in no topology domain", key)
}

// newSpreadGroup finds the eligible domains of a group: every node of the final
// state the owner may use, and for zones every zone a compatible pool offers.
func (c *checker) newSpreadGroup(owner *corev1.Pod, key string, sel labels.Selector, sp spreadPolicy) *spreadGroup {
	g := &spreadGroup{key: key, namespace: owner.Namespace, selector: sel, policy: sp, owner: owner,
		counts: map[string]int{}, domains: map[string]bool{}}
	for _, n := range c.nodes {
		if d, ok := c.domain(n, key); ok && sp.eligible(c, owner, n) {
			g.domains[d] = true
		}
	}
	if key == corev1.LabelTopologyZone {
		for _, z := range c.poolZones(owner, sp) {
			g.domains[z] = true
		}
	}
	return g
}

// poolZones are the zones the pod's compatible NodePools could launch into.
func (c *checker) poolZones(pod *corev1.Pod, sp spreadPolicy) []string {
	var zones []string
	for _, pool := range c.snap.NodePools {
		if _, blocked := untolerated(pod.Spec.Tolerations, pool.Spec.Template.Spec.Taints); sp.honorTaints && blocked {
			continue
		}
		reqs := apiReqs(pool.Spec.Template.Spec.Requirements)
		for _, it := range c.snap.InstanceTypes[pool.Name] {
			if !c.typeInPool(c.labelsOf(it), reqs) {
				continue
			}
			for _, o := range it.Offerings {
				if slices.Contains(zones, o.Zone) || !o.Available || !reqs.allows(corev1.LabelTopologyZone, o.Zone, true) ||
					!reqs.allows(v1alpha1.LabelCapacityType, o.CapacityType, true) {
					continue
				}
				nodeLabels := mergeLabels(c.labelsOf(it), pool.Spec.Template.ObjectMeta.Labels, map[string]string{
					v1alpha1.LabelNodePool: pool.Name, corev1.LabelTopologyZone: o.Zone, v1alpha1.LabelCapacityType: o.CapacityType})
				if !sp.honorAffinity || matchesNode(pod, fakeNode("", nodeLabels)) {
					zones = append(zones, o.Zone)
				}
			}
		}
	}
	return zones
}

// typeInPool reports whether the pool's requirements admit the type's labels.
func (c *checker) typeInPool(typeLabels map[string]string, reqs apiReqs) bool {
	for k, v := range typeLabels {
		if !reqs.allows(k, v, true) {
			return false
		}
	}
	return true
}
