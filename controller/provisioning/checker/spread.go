package checker

import (
	"fmt"
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// spreadGroup counts the pods a spread selector matches per eligible domain.
type spreadGroup struct {
	// domain -> matching pods on eligible nodes of the domain
	counts map[string]int
	// domain -> eligible
	domains map[string]bool
	// least count over eligible domains, computed once
	least *int
}

// min is the smallest count over eligible domains; 0 with fewer than minDomains.
func (g *spreadGroup) min(minDomains *int32) int {
	if len(g.domains) == 0 || (minDomains != nil && len(g.domains) < int(*minDomains)) {
		return 0
	}
	if g.least == nil {
		m := math.MaxInt
		for d := range g.domains {
			m = min(m, g.counts[d])
		}
		g.least = &m
	}
	return *g.least
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
		sig += fmt.Sprintf("aff%v%v", pod.Spec.NodeSelector, pod.Spec.Affinity.NodeAffinity)
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

// checkTopologySpread verifies every placed pod's DoNotSchedule spread
// constraints in the final state.
func (c *checker) checkTopologySpread() {
	groups := map[string]*spreadGroup{}
	for _, at := range c.pods {
		if !at.placed {
			continue
		}
		for i := range at.pod.Spec.TopologySpreadConstraints {
			tsc := &at.pod.Spec.TopologySpreadConstraints[i]
			if tsc.WhenUnsatisfiable == corev1.DoNotSchedule {
				c.checkSpread(at, tsc, groups)
			}
		}
	}
}

func (c *checker) checkSpread(at *podAt, tsc *corev1.TopologySpreadConstraint, groups map[string]*spreadGroup) {
	sel, err := selectorFor(at.pod, tsc.LabelSelector, tsc.MatchLabelKeys, nil)
	if err != nil {
		c.report(at.pod, at.node.name, ConstraintTopologySpread, "%v", err)
		return
	}
	sp := policyOf(tsc)
	key := fmt.Sprintf("%s|%s|%s|%s", tsc.TopologyKey, at.pod.Namespace, sel, sp.signature(at.pod))
	g, ok := groups[key]
	if !ok {
		g = c.buildSpreadGroup(at.pod, tsc.TopologyKey, sel, sp)
		groups[key] = g
	}
	d, ok := c.domain(at.node, tsc.TopologyKey)
	if !ok {
		c.reportMissingDomain(at, tsc.TopologyKey, ConstraintTopologySpread)
		return
	}
	lo := g.min(tsc.MinDomains)
	if skew := g.counts[d] - lo; skew > int(tsc.MaxSkew) {
		c.report(at.pod, at.node.name, ConstraintTopologySpread,
			"spread on %s (selector %q): domain %s has %d matching pods, the least of %d eligible domains has %d: skew %d > maxSkew %d",
			tsc.TopologyKey, sel, d, g.counts[d], len(g.domains), lo, skew, tsc.MaxSkew)
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

// buildSpreadGroup counts matching pods per eligible domain, and reports new
// claims that hold matching pods without a pinned domain.
func (c *checker) buildSpreadGroup(pod *corev1.Pod, key string, sel labels.Selector, sp spreadPolicy) *spreadGroup {
	g := &spreadGroup{counts: map[string]int{}, domains: map[string]bool{}}
	for _, n := range c.nodes {
		d, hasDomain := c.domain(n, key)
		for _, at := range n.pods {
			if at.pod.Namespace != pod.Namespace || !sel.Matches(labels.Set(at.pod.Labels)) {
				continue
			}
			if !hasDomain && n.isNew() && mustPin(key) {
				c.reportUnpinned(n, at.pod, key, ConstraintTopologySpread)
			}
			if hasDomain && sp.eligible(c, pod, n) {
				g.counts[d]++
			}
		}
		if hasDomain && sp.eligible(c, pod, n) {
			g.domains[d] = true
		}
	}
	if key == corev1.LabelTopologyZone {
		for _, z := range c.poolZones(pod, sp) {
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
