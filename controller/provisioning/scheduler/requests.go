package scheduler

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/scheduling"
)

// RequestMemory remembers pods' requests from solve to solve. Pods in the
// cluster state are never changed in place (an update is a new object), so a
// pod's address keys its requests; each solve keeps the entries it used and
// drops the rest. Working out the requests of every pod on every node is
// most of what building a solve costs with thousands of nodes. It is not safe
// for concurrent use: each caller keeps its own.
type RequestMemory struct {
	last, now map[*corev1.Pod]scheduling.Resources
}

// Of returns the pod's requests, remembered or worked out; a nil memory
// works them out.
func (m *RequestMemory) Of(p *corev1.Pod) scheduling.Resources {
	if m == nil {
		return scheduling.PodRequests(p)
	}
	if r, ok := m.now[p]; ok {
		return r
	}
	r, ok := m.last[p]
	if !ok {
		r = scheduling.PodRequests(p)
	}
	m.now[p] = r
	return r
}

// Next starts a solve: what the last one used is what this one may reuse.
func (m *RequestMemory) Next() *RequestMemory {
	if m == nil {
		return &RequestMemory{now: map[*corev1.Pod]scheduling.Resources{}}
	}
	return &RequestMemory{last: m.now, now: make(map[*corev1.Pod]scheduling.Resources, len(m.now))}
}
