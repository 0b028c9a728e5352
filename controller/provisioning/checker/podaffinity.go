package checker

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// termGroup holds the pods one affinity term selects, by domain.
type termGroup struct {
	key      string
	sel      labels.Selector
	allNS    bool
	ns       map[string]bool
	topology string
	// domain -> matching pods there
	members map[string][]*podAt
	total   int
	// pods that carry this very term as required affinity
	withTerm map[*corev1.Pod]bool
}

func (g *termGroup) matches(p *corev1.Pod) bool {
	return (g.allNS || g.ns[p.Namespace]) && g.sel.Matches(labels.Set(p.Labels))
}

// termNamespaces resolves a term's namespaces: the listed ones, all of them for an
// empty namespaceSelector, the pod's own when neither is set. A non-empty
// namespaceSelector cannot be evaluated without Namespace objects and adds none.
func termNamespaces(pod *corev1.Pod, term *corev1.PodAffinityTerm) (bool, map[string]bool) {
	ns := map[string]bool{}
	for _, n := range term.Namespaces {
		ns[n] = true
	}
	if term.NamespaceSelector != nil && len(term.NamespaceSelector.MatchLabels) == 0 && len(term.NamespaceSelector.MatchExpressions) == 0 {
		return true, ns
	}
	if len(ns) == 0 && term.NamespaceSelector == nil {
		ns[pod.Namespace] = true
	}
	return false, ns
}

// checkPodAffinity verifies required pod affinity of placed pods and required
// anti-affinity in both directions.
func (c *checker) checkPodAffinity() {
	groups := map[string]*termGroup{}
	var affinity []*termGroup
	for _, at := range c.pods {
		a := at.pod.Spec.Affinity
		if a == nil {
			continue
		}
		if a.PodAffinity != nil && at.placed {
			for i := range a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
				if g := c.termGroupFor(at, &a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution[i], groups); g != nil {
					affinity = appendUnique(affinity, g)
					g.withTerm[at.pod] = true
					c.checkAffinityTerm(at, g)
				}
			}
		}
		if a.PodAntiAffinity != nil {
			for i := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
				if g := c.termGroupFor(at, &a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[i], groups); g != nil {
					c.checkAntiAffinityTerm(at, g)
				}
			}
		}
	}
	for _, g := range affinity {
		c.checkSeeds(g)
	}
}

func appendUnique(gs []*termGroup, g *termGroup) []*termGroup {
	if slices.Contains(gs, g) {
		return gs
	}
	return append(gs, g)
}

// termGroupFor returns (building once) the group a term selects.
func (c *checker) termGroupFor(at *podAt, term *corev1.PodAffinityTerm, groups map[string]*termGroup) *termGroup {
	sel, err := selectorFor(at.pod, term.LabelSelector, term.MatchLabelKeys, term.MismatchLabelKeys)
	if err != nil {
		c.report(at.pod, at.node.name, ConstraintPodAffinity, "%v", err)
		return nil
	}
	allNS, ns := termNamespaces(at.pod, term)
	key := fmt.Sprintf("%s|%v|%v|%s", term.TopologyKey, allNS, sortedKeys(ns), sel)
	if g, ok := groups[key]; ok {
		return g
	}
	g := &termGroup{key: key, sel: sel, allNS: allNS, ns: ns, topology: term.TopologyKey, members: map[string][]*podAt{}, withTerm: map[*corev1.Pod]bool{}}
	for _, n := range c.nodes {
		d, ok := c.domain(n, term.TopologyKey)
		for _, q := range n.pods {
			if !g.matches(q.pod) {
				continue
			}
			g.total++
			if ok {
				g.members[d] = append(g.members[d], q)
			} else if n.isNew() && mustPin(term.TopologyKey) {
				c.reportUnpinned(n, q.pod, term.TopologyKey, ConstraintPodAffinity)
			}
		}
	}
	groups[key] = g
	return g
}

// checkAffinityTerm: another matching pod shares the pod's domain, or the pod
// matches its own term and no other matching pod exists anywhere.
func (c *checker) checkAffinityTerm(at *podAt, g *termGroup) {
	d, ok := c.domain(at.node, g.topology)
	if !ok {
		c.reportMissingDomain(at, g.topology, ConstraintPodAffinity)
		return
	}
	self := 0
	if g.matches(at.pod) {
		self = 1
	}
	if len(g.members[d])-self > 0 || (self == 1 && g.total == 1) {
		return
	}
	c.report(at.pod, at.node.name, ConstraintPodAffinity, "no other pod matching %q is in %s=%s (%d matching pods elsewhere)",
		g.sel, g.topology, d, g.total-self)
}

// checkAntiAffinityTerm: no other pod matching the term shares the pod's domain.
// A pair of already-bound pods is not the decision's doing and is not reported.
func (c *checker) checkAntiAffinityTerm(at *podAt, g *termGroup) {
	d, ok := c.domain(at.node, g.topology)
	if !ok {
		if at.placed && at.node.isNew() && mustPin(g.topology) && g.total > 0 {
			c.reportUnpinned(at.node, at.pod, g.topology, ConstraintPodAntiAffinity)
		}
		return
	}
	for _, q := range g.members[d] {
		if q.pod != at.pod && (at.placed || q.placed) {
			c.report(at.pod, at.node.name, ConstraintPodAntiAffinity, "pod %s matching %q is also in %s=%s (on node %s)",
				podKey(q.pod), g.sel, g.topology, d, q.node.name)
			return
		}
	}
}

// checkSeeds catches a self-affine group split across domains: pods that follow
// each other can only start one domain (the first pod's), and none at all when a
// matching pod already exists. A domain is anchored when it holds a matching pod
// that is already bound or does not carry the term (it could be placed first).
func (c *checker) checkSeeds(g *termGroup) {
	var seeds []string
	for _, d := range sortedKeys(g.members) {
		if !g.anchored(d) {
			seeds = append(seeds, d)
		}
	}
	allowed := 1
	if g.hasBound() {
		allowed = 0
	}
	for i, d := range seeds {
		if i < allowed {
			continue
		}
		first := g.members[d][0]
		c.report(first.pod, first.node.name, ConstraintPodAffinity,
			"pods matching %q are split: %s=%s has only pods that must follow another matching pod there, and seed domains %v cannot all be first",
			g.sel, g.topology, d, seeds)
	}
}

func (g *termGroup) anchored(d string) bool {
	for _, q := range g.members[d] {
		if !q.placed || !g.withTerm[q.pod] {
			return true
		}
	}
	return false
}

func (g *termGroup) hasBound() bool {
	for _, ms := range g.members {
		for _, q := range ms {
			if !q.placed {
				return true
			}
		}
	}
	return false
}
