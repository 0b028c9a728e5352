package cas

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/scheduling"
)

// AnnotationSafeToEvict is CA's pod annotation: "false" keeps the pod's node
// from scale-down, "true" lets it go despite local storage or no controller.
const AnnotationSafeToEvict = "cluster-autoscaler.kubernetes.io/safe-to-evict"

// podInfo is a pod with what the model checks against nodes, computed once a loop.
type podInfo struct {
	pod      *corev1.Pod
	requests scheduling.Resources
	// terms are alternatives (required node affinity ORs its terms), each
	// merged with the nodeSelector.
	terms []scheduling.Requirements
	// target key -> whether labels and taints allow the pod there
	static map[string]bool
}

func newPodInfo(pod *corev1.Pod) *podInfo {
	return &podInfo{pod: pod, requests: scheduling.PodRequests(pod), terms: nodeTerms(pod), static: map[string]bool{}}
}

func nodeTerms(pod *corev1.Pod) []scheduling.Requirements {
	base := scheduling.FromLabels(pod.Spec.NodeSelector)
	aff := pod.Spec.Affinity
	if aff == nil || aff.NodeAffinity == nil || aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return []scheduling.Requirements{base}
	}
	var terms []scheduling.Requirements
	for _, t := range aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		terms = append(terms, base.Merge(scheduling.FromNodeSelector(t.MatchExpressions)))
	}
	if len(terms) == 0 {
		return []scheduling.Requirements{base}
	}
	return terms
}

// target is a node, or a template node, pods may be placed on.
type target struct {
	// node is the node's name; "" for a template.
	node   string
	key    string
	reqs   scheduling.Requirements
	taints []corev1.Taint
	free   scheduling.Resources
	// gone marks a node found unneeded, no longer a destination.
	gone bool
}

// fits reports whether the pod fits t now: resources, labels and taints.
func (p *podInfo) fits(t *target) bool {
	return p.requests.Fits(t.free) && p.allowed(t)
}

// allowed reports whether t's labels and taints admit the pod, whatever its room.
func (p *podInfo) allowed(t *target) bool {
	ok, seen := p.static[t.key]
	if seen {
		return ok
	}
	ok = scheduling.Tolerates(t.taints, p.pod.Spec.Tolerations) == nil && slices.ContainsFunc(p.terms, t.reqs.Intersects)
	p.static[t.key] = ok
	return ok
}

// placeFirstFit puts the pod on the first target with room and returns it, or nil.
func placeFirstFit(p *podInfo, targets []*target) *target {
	for _, t := range targets {
		if p.fits(t) {
			t.free = t.free.Sub(p.requests)
			return t
		}
	}
	return nil
}

// isDaemonSetPod reports whether a DaemonSet controls the pod.
func isDaemonSetPod(pod *corev1.Pod) bool {
	ref := metav1.GetControllerOf(pod)
	return ref != nil && ref.Kind == "DaemonSet"
}

// staysOnNode reports whether the pod is ignored by scale-down: DaemonSet and
// mirror pods run on every node and do not need a new home.
func staysOnNode(pod *corev1.Pod) bool {
	_, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]
	return mirror || isDaemonSetPod(pod)
}

// evictionBlocker says why CA would not move the pod, or "" when it would:
// safe-to-evict "false", no controller, or local storage (emptyDir, hostPath).
func evictionBlocker(pod *corev1.Pod) string {
	switch pod.Annotations[AnnotationSafeToEvict] {
	case "true":
		return ""
	case "false":
		return "pod " + pod.Name + " is annotated safe-to-evict=false"
	}
	if metav1.GetControllerOf(pod) == nil {
		return "pod " + pod.Name + " is not backed by a controller"
	}
	for _, v := range pod.Spec.Volumes {
		if v.EmptyDir != nil || v.HostPath != nil {
			return "pod " + pod.Name + " has local storage"
		}
	}
	return ""
}

// podCache keeps each pod's podInfo from one loop to the next, keyed by the
// pod's pointer: World is expected to hand out the same *corev1.Pod while the
// pod lives (its scheduling fields are immutable). A pod not seen in a loop
// is dropped at the end of it.
type podCache struct {
	// pod -> its info, from the last loop and this one
	last, cur map[*corev1.Pod]*podInfo
}

func newPodCache() *podCache {
	return &podCache{last: map[*corev1.Pod]*podInfo{}, cur: map[*corev1.Pod]*podInfo{}}
}

// infos wraps pods sorted by namespace and name, for output independent of World's order.
func (c *podCache) infos(pods []*corev1.Pod) []*podInfo {
	out := make([]*podInfo, 0, len(pods))
	for _, p := range pods {
		out = append(out, c.info(p))
	}
	slices.SortStableFunc(out, func(a, b *podInfo) int {
		return cmp.Or(cmp.Compare(a.pod.Namespace, b.pod.Namespace), cmp.Compare(a.pod.Name, b.pod.Name))
	})
	return out
}

func (c *podCache) info(p *corev1.Pod) *podInfo {
	if i, ok := c.cur[p]; ok {
		return i
	}
	i, ok := c.last[p]
	if !ok {
		i = newPodInfo(p)
	}
	c.cur[p] = i
	return i
}

// endLoop forgets the pods not seen since the last endLoop.
func (c *podCache) endLoop() {
	c.last, c.cur = c.cur, c.last
	clear(c.cur)
}
