package scheduler

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/scheduling"
)

// podInfo is a pending pod with what the solver precomputes for it.
type podInfo struct {
	pod      *corev1.Pod
	requests scheduling.Resources
	class    *podClass
	// shape groups the pod with the alike pods of its class.
	shape shape
	// index is the pod's position in the snapshot, for stable output order.
	index int
	// virtual is true for a booking's pod (booked.go).
	virtual bool
	// priority is the pod's (PodPriority): higher priorities are solved first.
	priority int32
}

// shape groups alike pods: one class and the same requests.
type shape struct {
	class *podClass
	requestsKey
}

// requestsKey is a pod's requests as a comparable value.
type requestsKey struct {
	cpu, memory, ephemeral, podsEq int64
	extended                       string
}

func shapeOf(p *podInfo) shape {
	sh := shape{class: p.class, requestsKey: requestsKey{cpu: p.requests.CPU, memory: p.requests.Memory,
		ephemeral: p.requests.EphemeralStorage, podsEq: p.requests.Pods}}
	for _, e := range p.requests.Extended {
		sh.extended += fmt.Sprintf("%s=%d,", e.Name, e.Value)
	}
	return sh
}

// podClass holds the scheduling constraints that pods with identical specs share,
// so that each is computed once however many replicas there are.
type podClass struct {
	key       string
	namespace string
	labels    map[string]string
	// terms are alternatives (required node affinity is an OR of terms); each is
	// already merged with the nodeSelector and volume topology. Never empty.
	terms       []scheduling.Requirements
	tolerations []corev1.Toleration
	hostPorts   []scheduling.HostPort
	// volumeError is why the pod's volumes cannot be satisfied anywhere.
	volumeError string
	// The pod's own constraints, and the groups whose selectors match it.
	spreads, affinities, antiAffinities []*topologyGroup
	matches                             []*topologyGroup
	// ladder lists the variants tried in turn: the soft constraints held as
	// required, then shed one at a time (ladder.go). The base class itself
	// holds only the hard constraints.
	ladder []*podClass
	// hostnameOnly is the class with only its capped hostname preferences
	// (cost-aware's reference placement, costaware.go); nil when none.
	hostnameOnly *podClass
	// followsPods is true when some variant has pod affinity: such pods go
	// after the others, which may be the pods they follow.
	followsPods bool
	// strictTaints makes PreferNoSchedule taints block (respect, until relaxed).
	strictTaints bool
	// topologyKeys are the keys (hostname aside) a claim must be pinned on to hold this class.
	topologyKeys []string
	// never[i] is true when node i can never take this class: its taints, its
	// requirements or an anti-affinity count rule it out, and none of those relent.
	never []bool
}

// classKey identifies the scheduling-relevant part of a pod. Two pods with the same
// key are interchangeable except for their resource requests.
func classKey(pod *corev1.Pod) string {
	spec := pod.Spec
	var ports [][]corev1.ContainerPort
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		ports = append(ports, c.Ports)
	}
	var claims []string
	for _, v := range spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			claims = append(claims, v.PersistentVolumeClaim.ClaimName)
		}
		if v.Ephemeral != nil {
			claims = append(claims, pod.Name+"-"+v.Name)
		}
	}
	b, _ := json.Marshal([]any{pod.Namespace, pod.Labels, spec.NodeSelector, spec.Affinity, spec.Tolerations,
		spec.TopologySpreadConstraints, ports, claims, spec.NodeName})
	h := fnv.New64a()
	_, _ = h.Write(b)
	return strconv.FormatUint(h.Sum64(), 36) + ":" + strconv.Itoa(len(b))
}

// nodeRequirementTerms turns a pod's nodeSelector and required node affinity into
// alternative requirement sets.
func nodeRequirementTerms(pod *corev1.Pod) []scheduling.Requirements {
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
