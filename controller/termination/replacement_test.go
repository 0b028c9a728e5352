package termination_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/nodeclaim/nodeclaimtest"
	"github.com/stowage-dev/stowage/controller/termination"
)

// homes is a termination.Homes whose answer the test sets; it counts the
// questions, so that a test knows the drain has looked.
type homes struct {
	ready atomic.Bool
	asked atomic.Int64
}

func (h *homes) Ready(context.Context, string) bool {
	h.asked.Add(1)
	return h.ready.Load()
}

// askedAgain waits until the drain has asked at least n more times.
func (h *homes) askedAgain(e *nodeclaimtest.Env, n int64) {
	e.T.Helper()
	base := h.asked.Load()
	e.Eventually(settle, func() error {
		if h.asked.Load() < base+n {
			return fmt.Errorf("the drain has not looked again")
		}
		return nil
	})
}

// Replacement before eviction: the node is tainted at once, but its pods are
// evicted only once they have a Ready home elsewhere.
func TestTheDrainWaitsForThePodsReplacement(t *testing.T) {
	h := &homes{}
	e := startWith(t, h)
	pool := e.NodePool(nil)
	e.Create(pool)
	claim, node := registered(t, e, pool)
	web := e.Pod(e.Namespace(), "web", node.Name)
	running(e, web)

	e.Delete(claim)
	e.Eventually(settle, tainted(e, node))
	h.askedAgain(e, 3)
	notTerminating(t, e, web)

	h.ready.Store(true)
	e.Eventually(settle, func() error { return e.Gone(web) })
	finished(e, claim, node, claim.Status.ProviderID)
}

// A node marked with an interruption deadline is drained by the deadline less
// its pods' termination grace (30s by default) less a 10s margin, replacement
// Ready or not.
func TestTheDrainStartsByTheDeadlineLessThePodsGrace(t *testing.T) {
	h := &homes{}
	e := startWith(t, h)
	pool := e.NodePool(nil)
	e.Create(pool)
	claim, node := registered(t, e, pool)
	e.Update(node, func() {
		node.Annotations[v1alpha1.AnnotationInterruptionKind] = v1alpha1.InterruptionKindSpotInterruption
		node.Annotations[v1alpha1.AnnotationInterruptionDeadline] = e.Clock.Now().Add(2 * time.Minute).UTC().Format(time.RFC3339)
	})
	web := e.Pod(e.Namespace(), "web", node.Name)
	running(e, web)

	e.Delete(claim)
	e.Eventually(settle, tainted(e, node))
	e.Clock.Step(78 * time.Second) // the deadline is whole seconds: 2m less up to 1s, less 30s and 10s, is at least 1m19s
	h.askedAgain(e, 3)
	notTerminating(t, e, web)
	e.Clock.Step(2 * time.Second)
	e.Eventually(settle, func() error { return e.Gone(web) })
	finished(e, claim, node, claim.Status.ProviderID)
}

// A claim the Lambda marked while its instance had no Node gives the drain
// its deadline as well: a pod bound to the Node that registered later is
// evicted by the deadline less its grace and the margin; one a PDB protects
// is then deleted, as the instance goes at the deadline whatever the PDB says.
func TestAClaimsInterruptionDeadlineDrainsPastPDBs(t *testing.T) {
	h := &homes{}
	e := startWith(t, h)
	pool := e.NodePool(nil)
	e.Create(pool)
	claim, node := registered(t, e, pool)
	e.Update(claim, func() {
		claim.Annotations = map[string]string{v1alpha1.AnnotationInterruptionKind: v1alpha1.InterruptionKindSpotInterruption,
			v1alpha1.AnnotationInterruptionDeadline: e.Clock.Now().Add(2 * time.Minute).UTC().Format(time.RFC3339)}
	})
	ns := e.Namespace()
	web, batch := e.Pod(ns, "web", node.Name), e.Pod(ns, "batch", node.Name)
	running(e, web, batch)
	blockingPDB(e, ns, "web")
	deleted := nodeclaimtest.CounterValue(t, termination.Evictions.WithLabelValues(termination.OutcomeDeleted))

	e.Delete(claim)
	e.Eventually(settle, tainted(e, node))
	e.Clock.Step(78 * time.Second)
	h.askedAgain(e, 3)
	notTerminating(t, e, web, batch)
	e.Clock.Step(2 * time.Second)
	e.Eventually(settle, func() error { return e.Gone(batch) })
	e.Eventually(settle, func() error { return e.Gone(web) })
	e.ExpectCounter("evictions_total{outcome=deleted}", termination.Evictions.WithLabelValues(termination.OutcomeDeleted), deleted, 1)
	finished(e, claim, node, claim.Status.ProviderID)
}

// Without a deadline, the drain waits DefaultReplacementWait from the
// deletion at most.
func TestTheDrainWaitsForItsReplacementAtMostTheReplacementWait(t *testing.T) {
	h := &homes{}
	e := startWith(t, h)
	pool := e.NodePool(nil)
	e.Create(pool)
	claim, node := registered(t, e, pool)
	web := e.Pod(e.Namespace(), "web", node.Name)
	running(e, web)
	e.Delete(claim)
	e.Eventually(settle, tainted(e, node))
	e.Clock.Step(4 * time.Minute)
	h.askedAgain(e, 3)
	notTerminating(t, e, web)
	e.Clock.Step(2 * time.Minute) // past the deletion (on the API server's wall clock) plus 5m, with room for the setup
	e.Eventually(settle, func() error { return e.Gone(web) })
}
