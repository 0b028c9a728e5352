package disruption

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/scheduling"
)

// podRequests remembers each pod's requests from round to round. Pods in the
// cluster state are never changed in place (an update is a new object), so a
// pod's address keys its requests; each round keeps the entries of the pods it
// saw and drops the rest. Working requests out is most of what a round over
// thousands of pods costs.
type podRequests struct {
	last, now map[*corev1.Pod]scheduling.Resources
}

// of returns the pod's requests, remembered or worked out.
func (pr *podRequests) of(p *corev1.Pod) scheduling.Resources {
	if pr == nil {
		return scheduling.PodRequests(p)
	}
	if r, ok := pr.now[p]; ok {
		return r
	}
	r, ok := pr.last[p]
	if !ok {
		r = scheduling.PodRequests(p)
	}
	pr.now[p] = r
	return r
}

// next starts a round: what this one saw is what the next may reuse.
func (pr *podRequests) next() *podRequests {
	if pr == nil {
		return &podRequests{now: map[*corev1.Pod]scheduling.Resources{}}
	}
	return &podRequests{last: pr.now, now: make(map[*corev1.Pod]scheduling.Resources, len(pr.now))}
}

// requestsOf returns the pod's requests through the round's memory, if any.
func (r *Round) requestsOf(p *corev1.Pod) scheduling.Resources {
	if r.memo == nil {
		return scheduling.PodRequests(p)
	}
	return r.memo.requests.of(p)
}
