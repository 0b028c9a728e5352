package scheduler

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/scheduling"
)

// A pod's soft constraints are tried as if required, and shed one at a time
// while the pod fits nowhere: the class's ladder lists the variants in the
// order they are tried, the strictest first. The order is Karpenter's
// (kubernetes-sigs/karpenter, scheduling/preferences.go), one step at a time:
//
//  1. required node-affinity terms: only the first term holds, then the next
//     (respect only; the other policies take the terms as the OR they are);
//  2. preferred pod affinity terms, heaviest first (all hold until shed);
//  3. preferred pod anti-affinity terms, heaviest first (all hold until shed);
//  4. preferred node affinity: only the heaviest term holds, then the next;
//  5. ScheduleAnyway topology spreads, in the order Karpenter removes them
//     (the first in the list, whose slot the last then takes);
//  6. PreferNoSchedule taints block until this last step, which tolerates
//     them (respect only, and only when some pool has such a taint, as in
//     Karpenter; the other policies never let them block, as kube-scheduler).

// preference is one soft constraint.
type preference struct {
	weight int32
	terms  scheduling.Requirements // preferred node affinity
	group  *topologyGroup          // preferred pod (anti-)affinity or ScheduleAnyway spread
}

// preferenceSet is a pod's soft constraints by kind, each kind in the order it is shed.
type preferenceSet struct {
	podAffinity, podAntiAffinity, nodeAffinity, spreads []preference
}

func (ps preferenceSet) empty() bool {
	return len(ps.podAffinity)+len(ps.podAntiAffinity)+len(ps.nodeAffinity)+len(ps.spreads) == 0
}

// rung is one step of a ladder: what still holds.
type rung struct {
	term  int // index into the class's term alternatives
	prefs preferenceSet
	// strictTaints: PreferNoSchedule taints block.
	strictTaints bool
}

// relax sheds one constraint, in Karpenter's order; false when nothing is left to shed.
func (r *rung) relax(terms int) bool {
	switch {
	case r.term < terms-1:
		r.term++
	case len(r.prefs.podAffinity) > 0:
		r.prefs.podAffinity = r.prefs.podAffinity[1:]
	case len(r.prefs.podAntiAffinity) > 0:
		r.prefs.podAntiAffinity = r.prefs.podAntiAffinity[1:]
	case len(r.prefs.nodeAffinity) > 0:
		r.prefs.nodeAffinity = r.prefs.nodeAffinity[1:]
	case len(r.prefs.spreads) > 0:
		r.prefs.spreads = r.prefs.spreads[1:]
	case r.strictTaints:
		r.strictTaints = false
	default:
		return false
	}
	return true
}

// variant is the class with what the rung keeps as requirements.
func (r *rung) variant(base *podClass, alternatives [][]scheduling.Requirements) *podClass {
	c := *base
	c.spreads = slices.Clone(base.spreads)
	c.affinities = slices.Clone(base.affinities)
	c.antiAffinities = slices.Clone(base.antiAffinities)
	c.never, c.ladder = nil, nil
	c.terms = alternatives[r.term]
	if len(r.prefs.nodeAffinity) > 0 {
		c.terms = crossTerms(c.terms, []scheduling.Requirements{r.prefs.nodeAffinity[0].terms})
	}
	for _, p := range r.prefs.podAffinity {
		c.affinities = append(c.affinities, p.group)
	}
	for _, p := range r.prefs.podAntiAffinity {
		c.antiAffinities = append(c.antiAffinities, p.group)
	}
	for _, p := range r.prefs.spreads {
		c.spreads = append(c.spreads, p.group)
	}
	c.strictTaints = r.strictTaints
	return &c
}

// ladder lists the variants of a class in the order the policy tries them.
// Its last entry is what remains when everything that can be shed is: the
// base class itself, unless respect keeps one required term or blocks on
// PreferNoSchedule taints.
func (sv *solver) ladder(base *podClass, pod *corev1.Pod) []*podClass {
	if sv.opts.Preferences == PreferencesIgnore {
		return []*podClass{base}
	}
	respect := sv.opts.Preferences == PreferencesRespect
	prefs := sv.preferences(base, pod, !respect)
	alternatives := [][]scheduling.Requirements{base.terms}
	if respect {
		alternatives = sv.termAlternatives(base, pod)
	}
	r := rung{prefs: prefs, strictTaints: respect && sv.tolerationStep}
	if len(alternatives) == 1 && prefs.empty() && !r.strictTaints {
		return []*podClass{base}
	}
	var out []*podClass
	for {
		out = append(out, r.variant(base, alternatives))
		if !r.relax(len(alternatives)) {
			break
		}
	}
	if !respect {
		out[len(out)-1] = base
		base.hostnameOnly = hostnameOnly(base, prefs)
	}
	return out
}

// hostnameOnly is the class with its capped hostname preferences and no
// other, cost-aware's reference; nil when it has none.
func hostnameOnly(base *podClass, prefs preferenceSet) *podClass {
	capped := func(ps []preference) []preference {
		return slices.DeleteFunc(slices.Clone(ps), func(p preference) bool { return !p.group.capped })
	}
	r := rung{prefs: preferenceSet{podAntiAffinity: capped(prefs.podAntiAffinity), spreads: capped(prefs.spreads)}}
	if r.prefs.empty() {
		return nil
	}
	return r.variant(base, [][]scheduling.Requirements{base.terms})
}

// termAlternatives splits a pod's required node affinity into its terms, each
// with the nodeSelector and volume topology merged in, for respect's one
// term at a time.
func (sv *solver) termAlternatives(base *podClass, pod *corev1.Pod) [][]scheduling.Requirements {
	raw := nodeRequirementTerms(pod)
	if len(raw) <= 1 || base.volumeError != "" {
		return [][]scheduling.Requirements{base.terms}
	}
	out := make([][]scheduling.Requirements, 0, len(raw))
	for _, t := range raw {
		terms, err := sv.volumes.terms(pod, []scheduling.Requirements{t})
		if err != nil {
			return [][]scheduling.Requirements{base.terms}
		}
		out = append(out, terms)
	}
	return out
}

// preferences gathers the pod's soft constraints in the order each kind is
// shed. capped makes the hostname-level ones (preferred anti-affinity and
// ScheduleAnyway spreads on kubernetes.io/hostname) per-class groups whose
// per-node cap cost-aware sets (see costaware.go).
func (sv *solver) preferences(c *podClass, pod *corev1.Pod, capped bool) preferenceSet {
	var ps preferenceSet
	owner := func(key string) string {
		if capped && key == corev1.LabelHostname {
			return c.key
		}
		return ""
	}
	if a := pod.Spec.Affinity; a != nil {
		if a.PodAffinity != nil {
			for _, w := range a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
				ps.podAffinity = append(ps.podAffinity, preference{weight: w.Weight, group: sv.topology.group(groupSpec{kind: affinityGroup,
					key: w.PodAffinityTerm.TopologyKey, ns: termNamespaces(pod, w.PodAffinityTerm), selector: w.PodAffinityTerm.LabelSelector, soft: true})})
			}
		}
		if a.PodAntiAffinity != nil {
			for _, w := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
				t := w.PodAffinityTerm
				ps.podAntiAffinity = append(ps.podAntiAffinity, preference{weight: w.Weight, group: sv.topology.group(groupSpec{kind: antiAffinityGroup,
					key: t.TopologyKey, ns: termNamespaces(pod, t), selector: t.LabelSelector, soft: true, owner: owner(t.TopologyKey)})})
			}
		}
		if a.NodeAffinity != nil {
			for _, w := range a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
				ps.nodeAffinity = append(ps.nodeAffinity, preference{weight: w.Weight, terms: sv.keys.reqs(scheduling.FromNodeSelector(w.Preference.MatchExpressions))})
			}
		}
	}
	for _, i := range scheduleAnywayOrder(pod.Spec.TopologySpreadConstraints) {
		tsc := pod.Spec.TopologySpreadConstraints[i]
		ps.spreads = append(ps.spreads, preference{group: sv.spreadGroup(c, pod, tsc, true, owner(tsc.TopologyKey))})
	}
	for _, kind := range [][]preference{ps.podAffinity, ps.podAntiAffinity, ps.nodeAffinity} {
		slices.SortStableFunc(kind, func(a, b preference) int { return cmp.Compare(b.weight, a.weight) })
	}
	return ps
}

// scheduleAnywayOrder lists the indexes of the ScheduleAnyway constraints in
// the order Karpenter sheds them: it removes the first one left in the list
// by moving the list's last entry into its slot.
func scheduleAnywayOrder(tscs []corev1.TopologySpreadConstraint) []int {
	idx := make([]int, len(tscs))
	for i := range idx {
		idx[i] = i
	}
	var out []int
	for {
		at := slices.IndexFunc(idx, func(i int) bool { return tscs[i].WhenUnsatisfiable == corev1.ScheduleAnyway })
		if at < 0 {
			return out
		}
		out = append(out, idx[at])
		idx[at] = idx[len(idx)-1]
		idx = idx[:len(idx)-1]
	}
}
