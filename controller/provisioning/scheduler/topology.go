package scheduler

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

type groupKind int

const (
	spreadGroup groupKind = iota
	affinityGroup
	antiAffinityGroup
)

func (k groupKind) String() string {
	return [...]string{"topology spread", "pod affinity", "pod anti-affinity"}[k]
}

// topologyGroup counts the pods matching one selector in each domain of one
// topology key. Spread, affinity and anti-affinity constraints are all checks on
// such counts.
type topologyGroup struct {
	id            string
	kind          groupKind
	key           string
	namespaces    []string
	allNamespaces bool
	selector      labels.Selector
	maxSkew       int
	minDomains    int
	// soft groups come from preferences: only their owner class, while it still
	// holds them, respects them; other pods need not.
	soft bool
	// domains are the eligible values of key for a spread; nil for kubernetes.io/hostname,
	// whose domains are the nodes themselves.
	domains []string
	// perNode, when positive, caps the matching pods per node of a hostname
	// preference that cost-aware loosened (costaware.go); 0 until it is set.
	perNode int
	// capped groups belong to one class and take a perNode cap.
	capped bool
	counts map[string]int // domain -> matching pods
	owners map[string]int // domain -> pods that carry this required anti-affinity
	total  int
}

func (g *topologyGroup) String() string {
	return fmt.Sprintf("%s on %s for %s", g.kind, g.key, g.selector)
}

func (g *topologyGroup) matches(namespace string, podLabels map[string]string) bool {
	if !g.allNamespaces && !slices.Contains(g.namespaces, namespace) {
		return false
	}
	return g.selector.Matches(labels.Set(podLabels))
}

func (g *topologyGroup) add(domain string, owner bool) {
	if domain == "" {
		return
	}
	g.counts[domain]++
	g.total++
	if owner {
		g.owners[domain]++
	}
}

// minCount is the smallest count over the eligible domains; 0 when there are fewer
// eligible domains than minDomains, and for hostname, where a new empty node can
// always join (a conservative choice that keeps the decision valid whatever nodes
// exist when the pods bind).
func (g *topologyGroup) minCount() int {
	if g.domains == nil || len(g.domains) < g.minDomains {
		return 0
	}
	m := -1
	for _, d := range g.domains {
		if c := g.counts[d]; m < 0 || c < m {
			m = c
		}
	}
	return max(m, 0)
}

// allows reports whether one more pod of the group's owner class may go into domain.
func (g *topologyGroup) allows(domain string) bool {
	switch g.kind {
	case spreadGroup:
		if g.domains != nil && !slices.Contains(g.domains, domain) {
			return false
		}
		if g.capped {
			return g.counts[domain] < g.domainLimit()
		}
		return g.counts[domain]+1-g.minCount() <= g.maxSkew
	case affinityGroup:
		return g.counts[domain] > 0 || g.total == 0
	default:
		return g.counts[domain] < g.domainLimit()
	}
}

// domainLimit is how many matching pods one domain may hold under an
// anti-affinity (one), a hostname spread (maxSkew, as a new node can always
// join with none), or a capped hostname preference (its cap).
func (g *topologyGroup) domainLimit() int {
	limit := 1
	if g.kind == spreadGroup {
		limit = g.maxSkew
	}
	if g.capped {
		limit = max(limit, g.perNode)
	}
	return limit
}

// topology holds every group of a solve, keyed by id.
type topology struct {
	groups map[string]*topologyGroup
	order  []*topologyGroup
	// existing lists the pods already bound, with their nodes' labels, to seed new groups.
	existing []boundPod
	keys     labelKeys
}

type boundPod struct {
	pod    *corev1.Pod
	labels map[string]string // the node's labels
	node   string
}

func newTopology(existing []boundPod, keys labelKeys) *topology {
	t := &topology{groups: map[string]*topologyGroup{}, existing: existing, keys: keys}
	for _, bp := range existing {
		for _, term := range requiredAntiAffinity(bp.pod) {
			g := t.group(groupSpec{kind: antiAffinityGroup, key: term.TopologyKey, ns: termNamespaces(bp.pod, term), selector: term.LabelSelector})
			g.owners[domainValue(bp.labels, bp.node, g.key)]++
		}
	}
	return t
}

// groupSpec says what a topology group counts and checks.
type groupSpec struct {
	kind                groupKind
	key                 string
	ns                  nsScope
	selector            *metav1.LabelSelector
	maxSkew, minDomains int
	domains             []string
	soft                bool
	// owner, when set, makes the group its class's own (a capped hostname preference).
	owner string
}

// group returns the group with these parameters, creating and seeding it with the
// bound pods' counts the first time.
func (t *topology) group(spec groupSpec) *topologyGroup {
	spec.key = t.keys.key(spec.key)
	selector, err := metav1.LabelSelectorAsSelector(spec.selector)
	if err != nil || spec.selector == nil {
		selector = labels.Nothing()
	}
	id := strings.Join([]string{strconv.Itoa(int(spec.kind)), spec.key, spec.ns.String(), selector.String(),
		strconv.Itoa(spec.maxSkew), strconv.Itoa(spec.minDomains), strings.Join(spec.domains, ","), strconv.FormatBool(spec.soft), spec.owner}, "|")
	if g, ok := t.groups[id]; ok {
		return g
	}
	g := &topologyGroup{id: id, kind: spec.kind, key: spec.key, namespaces: spec.ns.names, allNamespaces: spec.ns.all,
		selector: selector, maxSkew: spec.maxSkew, minDomains: spec.minDomains, domains: spec.domains, soft: spec.soft,
		capped: spec.owner != "", counts: map[string]int{}, owners: map[string]int{}}
	for _, bp := range t.existing {
		// kube-scheduler's spreads do not count a terminating pod (its
		// affinity terms do): a pod being evicted leaves its domain now.
		if g.kind == spreadGroup && bp.pod.DeletionTimestamp != nil {
			continue
		}
		if g.matches(bp.pod.Namespace, bp.pod.Labels) {
			g.add(domainValue(bp.labels, bp.node, spec.key), false)
		}
	}
	t.groups[id] = g
	t.order = append(t.order, g)
	return g
}

func domainValue(nodeLabels map[string]string, nodeName, key string) string {
	if key == corev1.LabelHostname {
		if v, ok := nodeLabels[key]; ok {
			return v
		}
		return nodeName
	}
	return nodeLabels[key]
}

// nsScope is the set of namespaces a pod (anti-)affinity term looks at.
type nsScope struct {
	all   bool
	names []string
}

func (s nsScope) String() string {
	if s.all {
		return "*"
	}
	return strings.Join(s.names, ",")
}

func termNamespaces(pod *corev1.Pod, term corev1.PodAffinityTerm) nsScope {
	if term.NamespaceSelector != nil && len(term.NamespaceSelector.MatchLabels) == 0 && len(term.NamespaceSelector.MatchExpressions) == 0 {
		return nsScope{all: true}
	}
	if len(term.Namespaces) == 0 {
		return nsScope{names: []string{pod.Namespace}}
	}
	names := slices.Clone(term.Namespaces)
	slices.Sort(names)
	return nsScope{names: slices.Compact(names)}
}

func requiredAntiAffinity(pod *corev1.Pod) []corev1.PodAffinityTerm {
	if a := pod.Spec.Affinity; a != nil && a.PodAntiAffinity != nil {
		return a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}

func requiredAffinity(pod *corev1.Pod) []corev1.PodAffinityTerm {
	if a := pod.Spec.Affinity; a != nil && a.PodAffinity != nil {
		return a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}

// spreadSelector merges matchLabelKeys into the constraint's selector using the pod's labels.
func spreadSelector(pod *corev1.Pod, c corev1.TopologySpreadConstraint) *metav1.LabelSelector {
	if c.LabelSelector == nil {
		return nil
	}
	sel := c.LabelSelector.DeepCopy()
	for _, k := range c.MatchLabelKeys {
		if v, ok := pod.Labels[k]; ok {
			sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpIn, Values: []string{v}})
		}
	}
	return sel
}
