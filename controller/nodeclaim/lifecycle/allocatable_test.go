package lifecycle_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/nodeclaim/lifecycle"
	"github.com/stowage-dev/stowage/controller/nodeclaim/nodeclaimtest"
)

// initializeWith registers a Node for the claim with the allocatable edit
// gives the predicted one, and waits until the claim is Initialized.
func initializeWith(e *nodeclaimtest.Env, pool *v1alpha1.NodePool, name string, edit func(corev1.ResourceList)) *v1alpha1.NodeClaim {
	e.T.Helper()
	claim := e.NodeClaim(name, pool)
	e.Create(claim)
	e.Eventually(settle, hasCondition(e, claim, v1alpha1.ConditionLaunched, metav1.ConditionTrue, ""))
	node := e.Node(name, claim.Status.ProviderID)
	node.Status.Capacity, node.Status.Allocatable = claim.Status.Capacity.DeepCopy(), claim.Status.Allocatable.DeepCopy()
	edit(node.Status.Allocatable)
	e.Create(node)
	e.Eventually(settle, hasCondition(e, claim, v1alpha1.ConditionRegistered, metav1.ConditionTrue, ""))
	e.SetReady(node)
	e.Eventually(settle, hasCondition(e, claim, v1alpha1.ConditionInitialized, metav1.ConditionTrue, ""))
	return claim
}

// TestAnAllocatableOtherThanPredictedIsReported: at initialization, a Node
// whose allocatable memory is not the one predicted at launch is a Warning
// event on its claim naming both figures and a count for memory and the
// pool; a Node with the predicted allocatable is neither.
func TestAnAllocatableOtherThanPredictedIsReported(t *testing.T) {
	e := start(t, lifecycle.Options{})
	pool := e.NodePool(nil)
	e.Create(pool)
	memory, cpu := lifecycle.AllocatableMismatch.WithLabelValues("memory", pool.Name), lifecycle.AllocatableMismatch.WithLabelValues("cpu", pool.Name)
	memBase, cpuBase := nodeclaimtest.CounterValue(t, memory), nodeclaimtest.CounterValue(t, cpu)

	initializeWith(e, pool, "same", func(corev1.ResourceList) {})
	claim := initializeWith(e, pool, "less", func(rl corev1.ResourceList) {
		m := rl[corev1.ResourceMemory]
		m.Sub(resource.MustParse("64Mi"))
		rl[corev1.ResourceMemory] = m
	})
	e.ExpectCounter("memory mismatches", memory, memBase, 1)
	e.ExpectCounter("cpu mismatches", cpu, cpuBase, 0)
	want := claim.Status.Allocatable[corev1.ResourceMemory]
	e.Eventually(settle, func() error {
		var list eventsv1.EventList
		if err := e.Mgr.GetAPIReader().List(e.Ctx, &list, client.MatchingFields{"reason": "AllocatableMismatch"}); err != nil {
			return err
		}
		var notes []string
		for _, ev := range list.Items {
			if ev.Regarding.Name == claim.Name && ev.Type == corev1.EventTypeWarning {
				notes = append(notes, ev.Note)
			}
		}
		if len(notes) != 1 || !strings.Contains(notes[0], "memory predicted "+want.String()+", registered") {
			return fmt.Errorf("AllocatableMismatch events about %s: %q", claim.Name, notes)
		}
		return nil
	})
}
