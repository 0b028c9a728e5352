package scheduler

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/scheduling"
)

// preference is one soft constraint, applied as if required until relaxed.
type preference struct {
	weight int32
	// rank breaks weight ties: pod affinity, pod anti-affinity, node affinity, spread.
	rank  int
	terms scheduling.Requirements // preferred node affinity
	group *topologyGroup          // preferred pod (anti-)affinity or ScheduleAnyway spread
}

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
	if !sv.opts.IgnorePreferences {
		base.preferences = sv.preferences(base, pod)
	}
	base.relaxed = relaxations(base)
	sv.classes[key] = base
	return base
}

func (sv *solver) addRequiredGroups(c *podClass, pod *corev1.Pod) {
	for _, tsc := range pod.Spec.TopologySpreadConstraints {
		if tsc.WhenUnsatisfiable == corev1.DoNotSchedule {
			c.spreads = append(c.spreads, sv.spreadGroup(c, pod, tsc, false))
		}
	}
	for _, term := range requiredAffinity(pod) {
		c.affinities = append(c.affinities, sv.topology.group(groupSpec{kind: affinityGroup, key: term.TopologyKey, ns: termNamespaces(pod, term), selector: term.LabelSelector}))
	}
	for _, term := range requiredAntiAffinity(pod) {
		c.antiAffinities = append(c.antiAffinities, sv.topology.group(groupSpec{kind: antiAffinityGroup, key: term.TopologyKey, ns: termNamespaces(pod, term), selector: term.LabelSelector}))
	}
}

func (sv *solver) spreadGroup(c *podClass, pod *corev1.Pod, tsc corev1.TopologySpreadConstraint, preferred bool) *topologyGroup {
	minDomains := 0
	if tsc.MinDomains != nil {
		minDomains = int(*tsc.MinDomains)
	}
	var domains []string
	if tsc.TopologyKey != corev1.LabelHostname {
		domains = sv.eligibleDomains(c, tsc)
	}
	return sv.topology.group(groupSpec{kind: spreadGroup, key: tsc.TopologyKey, ns: nsScope{names: []string{pod.Namespace}},
		selector: spreadSelector(pod, tsc), maxSkew: int(tsc.MaxSkew), minDomains: minDomains, domains: domains, soft: preferred})
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

// preferences lists the pod's soft constraints, lightest first.
func (sv *solver) preferences(c *podClass, pod *corev1.Pod) []preference {
	var out []preference
	if a := pod.Spec.Affinity; a != nil {
		if a.PodAffinity != nil {
			for _, w := range a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
				g := sv.topology.group(groupSpec{kind: affinityGroup, key: w.PodAffinityTerm.TopologyKey, ns: termNamespaces(pod, w.PodAffinityTerm), selector: w.PodAffinityTerm.LabelSelector, soft: true})
				out = append(out, preference{weight: w.Weight, rank: 0, group: g})
			}
		}
		if a.PodAntiAffinity != nil {
			for _, w := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
				g := sv.topology.group(groupSpec{kind: antiAffinityGroup, key: w.PodAffinityTerm.TopologyKey, ns: termNamespaces(pod, w.PodAffinityTerm), selector: w.PodAffinityTerm.LabelSelector, soft: true})
				out = append(out, preference{weight: w.Weight, rank: 1, group: g})
			}
		}
		if a.NodeAffinity != nil {
			for _, w := range a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
				out = append(out, preference{weight: w.Weight, rank: 2, terms: sv.keys.reqs(scheduling.FromNodeSelector(w.Preference.MatchExpressions))})
			}
		}
	}
	for _, tsc := range pod.Spec.TopologySpreadConstraints {
		if tsc.WhenUnsatisfiable == corev1.ScheduleAnyway {
			out = append(out, preference{weight: 0, rank: 3, group: sv.spreadGroup(c, pod, tsc, true)})
		}
	}
	slices.SortStableFunc(out, func(a, b preference) int { return cmp.Or(cmp.Compare(a.weight, b.weight), cmp.Compare(a.rank, b.rank)) })
	return out
}

// relaxations builds the class with all its preferences as requirements, then
// with the lightest dropped, and so on down to the class with none.
func relaxations(base *podClass) []*podClass {
	out := make([]*podClass, 0, len(base.preferences)+1)
	for k := 0; k < len(base.preferences); k++ {
		out = append(out, withPreferences(base, base.preferences[k:]))
	}
	return append(out, base)
}

func withPreferences(base *podClass, prefs []preference) *podClass {
	c := *base
	c.spreads = slices.Clone(base.spreads)
	c.affinities = slices.Clone(base.affinities)
	c.antiAffinities = slices.Clone(base.antiAffinities)
	c.never = nil
	c.relaxed = nil
	for _, p := range prefs {
		switch {
		case p.group == nil:
			c.terms = crossTerms(c.terms, []scheduling.Requirements{p.terms})
		case p.group.kind == spreadGroup:
			c.spreads = append(c.spreads, p.group)
		case p.group.kind == affinityGroup:
			c.affinities = append(c.affinities, p.group)
		default:
			c.antiAffinities = append(c.antiAffinities, p.group)
		}
	}
	return &c
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
		for _, c := range base.relaxed {
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
