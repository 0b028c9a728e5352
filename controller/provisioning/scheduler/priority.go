package scheduler

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
)

// PodPriority is the priority a pod is solved at: spec.priority when set (the
// Priority admission plugin sets it on every pod it admits), else the value of
// the PriorityClass its priorityClassName names (classes: name -> value),
// else 0.
func PodPriority(pod *corev1.Pod, classes map[string]int32) int32 {
	if pod.Spec.Priority != nil {
		return *pod.Spec.Priority
	}
	return classes[pod.Spec.PriorityClassName]
}

// Bound cuts a solve short. The solver asks it before each pod it tries, in
// priority order, so that when it says stop the pods already placed are the
// highest-priority ones; the pods not tried yet are Results.Waiting.
type Bound interface {
	// Reached reports whether the solve must stop now; tried is how many
	// pods it has tried so far.
	Reached(tried int) bool
}

// Deadline is a Bound on a clock: the solve stops once clk reads at or after
// At. The provisioner sets At to the batch's start plus --solve-time-bound.
type Deadline struct {
	Clock clock.PassiveClock
	At    time.Time
}

// Reached reports whether the deadline has passed.
func (d Deadline) Reached(int) bool { return !d.Clock.Now().Before(d.At) }

// PodBudget is a Bound counted in pods tried: a deterministic stand-in for a
// time bound where no real time passes during a solve (the simulator's
// virtual clock stands still while it runs).
type PodBudget int

// Reached reports whether the budget's pods have all been tried.
func (b PodBudget) Reached(tried int) bool { return tried >= int(b) }

// reasonSolveBound is why a pod waits when the solve's bound cut it short.
func reasonSolveBound(tried, waiting int) string {
	return fmt.Sprintf("the batch's solve reached its time bound after %d pods, highest priorities first; "+
		"this pod and %d others wait for the next batch", tried, waiting-1)
}

// admits reports whether the pool may buy capacity for a pod of this
// priority: its spec.minPodPriority is unset or at most the priority.
func (p *pool) admits(priority int32) bool {
	m := p.np.Spec.MinPodPriority
	return m == nil || priority >= *m
}
