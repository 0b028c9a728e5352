package scheduler

import (
	"fmt"
	"slices"

	"github.com/go-logr/logr"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/scheduling"
)

// classFor returns the pod's class, building it the first time its key is seen.
func (sv *solver) classFor(pod *corev1.Pod) *podClass {
	key := classKey(pod)
	if c, ok := sv.classes[key]; ok {
		return c
	}
	base := &podClass{key: key, namespace: pod.Namespace, labels: pod.Labels, tolerations: pod.Spec.Tolerations,
		hostPorts: scheduling.PodHostPorts(pod)}
	terms, err := sv.volumes.terms(pod, sv.keys.terms(nodeRequirementTerms(pod)))
	if err != nil {
		base.volumeError = err.Error()
		terms = sv.keys.terms(nodeRequirementTerms(pod))
	}
	base.terms = terms
	sv.addRequiredGroups(base, pod)
	base.ladder = sv.ladder(base, pod)
	base.followsPods = len(base.affinities) > 0 || slices.ContainsFunc(base.ladder, func(c *podClass) bool { return len(c.affinities) > 0 })
	sv.classes[key] = base
	return base
}

func (sv *solver) addRequiredGroups(c *podClass, pod *corev1.Pod) {
	for _, tsc := range pod.Spec.TopologySpreadConstraints {
		if tsc.WhenUnsatisfiable == corev1.DoNotSchedule {
			c.spreads = append(c.spreads, sv.spreadGroup(c, pod, tsc, false, ""))
		}
	}
	for _, term := range requiredAffinity(pod) {
		c.affinities = append(c.affinities, sv.topology.group(groupSpec{kind: affinityGroup, key: term.TopologyKey, ns: termNamespaces(pod, term), selector: term.LabelSelector}))
	}
	for _, term := range requiredAntiAffinity(pod) {
		c.antiAffinities = append(c.antiAffinities, sv.topology.group(groupSpec{kind: antiAffinityGroup, key: term.TopologyKey, ns: termNamespaces(pod, term), selector: term.LabelSelector}))
	}
}

// spreadGroup is the group a spread constraint checks; owner, when set, makes it
// a group of that class alone (cost-aware's capped hostname preferences).
func (sv *solver) spreadGroup(c *podClass, pod *corev1.Pod, tsc corev1.TopologySpreadConstraint, preferred bool, owner string) *topologyGroup {
	minDomains := 0
	if tsc.MinDomains != nil {
		minDomains = int(*tsc.MinDomains)
	}
	var domains []string
	if tsc.TopologyKey != corev1.LabelHostname {
		domains = sv.eligibleDomains(c, tsc)
	}
	return sv.topology.group(groupSpec{kind: spreadGroup, key: tsc.TopologyKey, ns: nsScope{names: []string{pod.Namespace}},
		selector: spreadSelector(pod, tsc), maxSkew: int(tsc.MaxSkew), minDomains: minDomains, domains: domains, soft: preferred, owner: owner})
}

// eligibleDomains are the values of the spread's key on the nodes the pod could
// use: those its node affinity allows (nodeAffinityPolicy Honor, the default), in
// existing nodes and in every pool (taints are ignored, as nodeTaintsPolicy Ignore says).
func (sv *solver) eligibleDomains(c *podClass, tsc corev1.TopologySpreadConstraint) []string {
	honor := tsc.NodeAffinityPolicy == nil || *tsc.NodeAffinityPolicy == corev1.NodeInclusionPolicyHonor
	honorTaints := tsc.NodeTaintsPolicy != nil && *tsc.NodeTaintsPolicy == corev1.NodeInclusionPolicyHonor
	seen, key := map[string]bool{}, sv.keys.key(tsc.TopologyKey)
	for _, n := range sv.nodes[:sv.existing] {
		if v := n.domain(key); v != "" && (!honor || anyTermCompatible(n.reqs, c.terms)) &&
			(!honorTaints || scheduling.Tolerates(n.taints, c.tolerations) == nil) {
			seen[v] = true
		}
	}
	for _, p := range sv.pools {
		if honorTaints && scheduling.Tolerates(p.taints, c.tolerations) != nil {
			continue
		}
		terms := c.terms
		if !honor {
			terms = []scheduling.Requirements{{}}
		}
		for _, t := range terms {
			if termCompatible(p.reqs, t) {
				for _, v := range p.domainsFor(key, t) {
					seen[v] = true
				}
			}
		}
	}
	out := make([]string, 0, len(seen))
	for v := range seen {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// linkMatches records, for every class, the groups whose selectors match its pods.
func (sv *solver) linkMatches() {
	keys := make([]string, 0, len(sv.classes))
	for k := range sv.classes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		base := sv.classes[k]
		var matches []*topologyGroup
		for _, g := range sv.topology.order {
			if g.matches(base.namespace, base.labels) {
				matches = append(matches, g)
			}
		}
		variants := base.ladder
		if base.hostnameOnly != nil {
			variants = append(slices.Clone(variants), base.hostnameOnly)
		}
		for _, c := range variants {
			c.matches = matches
			c.topologyKeys = topologyKeys(c)
		}
	}
}

func topologyKeys(c *podClass) []string {
	var keys []string
	for _, g := range slices.Concat(c.spreads, c.affinities, c.antiAffinities, c.matches) {
		if g.key != corev1.LabelHostname && !slices.Contains(keys, g.key) {
			keys = append(keys, g.key)
		}
	}
	slices.Sort(keys)
	return keys
}

func (c *podClass) skip(i int) {
	if i < 0 {
		return
	}
	if i >= len(c.never) {
		c.never = append(c.never, make([]bool, i+1-len(c.never)+64)...)
	}
	c.never[i] = true
}

func (c *podClass) skipped(i int) bool { return i < len(c.never) && c.never[i] }

// tolerates reports the first taint the class does not tolerate: NoSchedule
// and NoExecute taints, and PreferNoSchedule ones too while the class is
// strict about them (respect, until its last relaxation).
func (c *podClass) tolerates(taints []corev1.Taint) error {
	if err := scheduling.Tolerates(taints, c.tolerations); err != nil || !c.strictTaints {
		return err
	}
	for i := range taints {
		t := &taints[i]
		if t.Effect == corev1.TaintEffectPreferNoSchedule && !slices.ContainsFunc(c.tolerations, func(tol corev1.Toleration) bool {
			return tol.ToleratesTaint(logr.Discard(), t, true)
		}) {
			return fmt.Errorf("taint %s is not tolerated (respected until the pod's last relaxation)", scheduling.TaintString(t))
		}
	}
	return nil
}
