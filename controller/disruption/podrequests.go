package disruption

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/scheduling"
	"github.com/stowage-dev/stowage/controller/termination"
)

// podRequests remembers each pod's requests, and what a round needs to know
// of each node's pods, from round to round. Pods in the cluster state are
// never changed in place (an update is a new object), so a pod's address keys
// its requests, and a node's list of pod addresses keys its summary; each
// round keeps the entries it saw and drops the rest. Going over every pod of
// the cluster is most of what a round costs, and most nodes' pods do not
// change from one round to the next.
type podRequests struct {
	pods              *scheduler.RequestMemory
	lastNode, nowNode map[string]*nodePods
}

// nodePods is what rounds ask about a node's pods, worked out once for each
// list of pods the node has.
type nodePods struct {
	pods []*corev1.Pod // what it was worked out from
	// reschedulable are the pods that would need a new home (see
	// reschedulable), and moving the sum of their requests.
	reschedulable []*corev1.Pod
	moving        scheduling.Resources
	// used sums the requests of the pods that have not finished.
	used scheduling.Resources
	// evictionCost is the reschedulable pods' (see evictionCost).
	evictionCost float64
	// protected are the unfinished pods annotated do-not-disrupt, whose
	// protection depends on the time.
	protected []*corev1.Pod
	// antiAffinity: some unfinished pod has required pod anti-affinity.
	antiAffinity bool
}

// of returns the pod's requests, remembered or worked out.
func (pr *podRequests) of(p *corev1.Pod) scheduling.Resources {
	if pr == nil {
		return scheduling.PodRequests(p)
	}
	return pr.pods.Of(p)
}

// memory is the requests memory to solve with; nil for none.
func (pr *podRequests) memory() *scheduler.RequestMemory {
	if pr == nil {
		return nil
	}
	return pr.pods
}

// node returns the summary of the node's pods, remembered or worked out.
func (pr *podRequests) node(sn *scheduler.StateNode) *nodePods {
	if pr == nil {
		return summarize(sn.Pods, nil)
	}
	name := sn.Name()
	if np, ok := pr.nowNode[name]; ok && slices.Equal(np.pods, sn.Pods) {
		return np
	}
	np, ok := pr.lastNode[name]
	if !ok || !slices.Equal(np.pods, sn.Pods) {
		np = summarize(sn.Pods, pr)
	}
	pr.nowNode[name] = np
	return np
}

func summarize(pods []*corev1.Pod, pr *podRequests) *nodePods {
	np := &nodePods{pods: slices.Clone(pods)}
	for _, p := range pods {
		if scheduling.Finished(p) {
			continue
		}
		req := pr.of(p)
		np.used = np.used.Add(req)
		np.antiAffinity = np.antiAffinity || requiredAntiAffinity(p)
		if termination.DoNotDisruptAnnotated(p.Annotations) && !scheduler.IsVirtual(p) {
			np.protected = append(np.protected, p)
		}
		if scheduling.Reschedulable(p) {
			np.reschedulable = append(np.reschedulable, p)
			np.moving = np.moving.Add(req)
			np.evictionCost += evictionCost(p)
		}
	}
	return np
}

// next starts a round: what this one saw is what the next may reuse.
func (pr *podRequests) next() *podRequests {
	if pr == nil {
		return &podRequests{pods: (*scheduler.RequestMemory)(nil).Next(), nowNode: map[string]*nodePods{}}
	}
	return &podRequests{pods: pr.pods.Next(), lastNode: pr.nowNode, nowNode: make(map[string]*nodePods, len(pr.nowNode))}
}

// requestsOf returns the pod's requests through the round's memory, if any.
func (r *Round) requestsOf(p *corev1.Pod) scheduling.Resources {
	if r.memo == nil {
		return scheduling.PodRequests(p)
	}
	return r.memo.requests.of(p)
}

// podsOf returns the summary of the node's pods through the round's memory,
// if any.
func (r *Round) podsOf(sn *scheduler.StateNode) *nodePods {
	if r == nil || r.memo == nil {
		return summarize(sn.Pods, nil)
	}
	return r.memo.requests.node(sn)
}
