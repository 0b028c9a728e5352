package checker

import (
	"math"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

// checkWaitingPriorities verifies that a solve cut short by its bound placed
// the highest priorities: no pod left waiting has a higher priority than a
// real pod placed. A pod's priority is its spec.priority, else its
// PriorityClass's value, else 0, as the Priority admission plugin gives it.
func (c *checker) checkWaitingPriorities() {
	priority := func(p *corev1.Pod) int32 {
		if p.Spec.Priority != nil {
			return *p.Spec.Priority
		}
		return c.snap.PriorityClasses[p.Spec.PriorityClassName]
	}
	// A booking's virtual pods go after every real pod, whatever their priority.
	virtual := func(p *corev1.Pod) bool { _, ok := p.Annotations[scheduler.AnnotationBookedBy]; return ok }
	highest, waiting := int32(math.MinInt32), false
	for _, w := range c.res.Waiting {
		if !virtual(w.Pod) {
			highest, waiting = max(highest, priority(w.Pod)), true
		}
	}
	if !waiting {
		return
	}
	for _, p := range c.res.Order {
		if !virtual(p) && priority(p) < highest {
			c.report(p, "", ConstraintPriority, "placed at priority %d while a pod of priority %d waits for the next batch", priority(p), highest)
		}
	}
}
