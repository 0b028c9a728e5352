package report

import (
	"cmp"
	"slices"
	"time"
)

// LongWait is how long a pod may take from its creation to Running before
// the report says why it waited.
const LongWait = 5 * time.Minute

// The kinds of Wait, from the most specific cause to the least.
const (
	// WaitNodeClassNotReady: the NodeClass of every pool the pod could use
	// is not Ready (its subnets, security groups, image or role do not
	// resolve); Reason quotes its Ready condition.
	WaitNodeClassNotReady = "nodeclass-not-ready"
	// WaitDrainHeld: the pools were at their limits while a budget or a
	// PodDisruptionBudget held back the drain that would have made room.
	WaitDrainHeld = "drain-held"
	// WaitPoolLimit: the pools the pod could use were at their limits.
	WaitPoolLimit = "pool-limit"
	// WaitShortage: every offering the pod's capacity could use was short.
	WaitShortage = "shortage"
	// WaitLaunchFailed: the capacity launched for it failed otherwise.
	WaitLaunchFailed = "launch-failed"
	// WaitProvisioner: the provisioner could not place it; Reason is its
	// FailedScheduling message, the words `stowage schedule` prints.
	WaitProvisioner = "provisioner"
	// WaitSolveBound: a batch's solve reached its time bound before the
	// pod's turn (higher priorities go first), and it waited for a later
	// batch; the launch that followed went as planned.
	WaitSolveBound = "solve-bound"
	// WaitLaunching: capacity was launched for it and not Ready yet.
	WaitLaunching = "launching"
	// WaitUnexplained: nothing was said of it.
	WaitUnexplained = "unexplained"
)

// Wait is one reason pods waited, and the pods it held back.
type Wait struct {
	// Kind is one of the Wait* kinds; Reason says it in words.
	Kind, Reason string
	// Pods counts the pods; NeverRan those of them that never ran.
	Pods, NeverRan int
	// Longest is the longest wait among them, to Running or to the pod's end.
	Longest time.Duration
	// Example is one of the pods, namespace/name.
	Example string
}

// Waits groups pods' waits, one entry per kind and reason.
type Waits struct {
	byReason map[[2]string]*Wait
}

// Add counts one pod's wait.
func (ws *Waits) Add(kind, reason, pod string, waited time.Duration, ran bool) {
	if ws.byReason == nil {
		ws.byReason = map[[2]string]*Wait{}
	}
	k := [2]string{kind, reason}
	w, ok := ws.byReason[k]
	if !ok {
		w = &Wait{Kind: kind, Reason: reason, Example: pod}
		ws.byReason[k] = w
	}
	w.Pods++
	if !ran {
		w.NeverRan++
	}
	w.Longest = max(w.Longest, waited)
}

// List returns the groups, most pods first, then by kind and reason.
func (ws *Waits) List() []Wait {
	out := make([]Wait, 0, len(ws.byReason))
	for _, w := range ws.byReason {
		out = append(out, *w)
	}
	slices.SortFunc(out, func(a, b Wait) int {
		return cmp.Or(cmp.Compare(b.Pods, a.Pods), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Reason, b.Reason))
	})
	return out
}

// WaitedPods sums the pods of every wait.
func (s *System) WaitedPods() int {
	n := 0
	for _, w := range s.Waits {
		n += w.Pods
	}
	return n
}
