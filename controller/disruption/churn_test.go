package disruption_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/disruption"
	"github.com/stowage-dev/stowage/controller/state/statetest"
)

// twoTypes are "x" and "y", alike but for their on-demand prices.
func twoTypes(x, y float64) []*cloudprovider.InstanceType {
	return []*cloudprovider.InstanceType{priced("x", 4, x), priced("y", 4, y)}
}

// The reference's churn pattern: when two offerings trade places in price
// back and forth, it replaces a node with the cheaper one, then back, for
// ever. Under prices that flip every hour for twelve hours, Stowage replaces
// the node once, when the first flip makes another type cheaper by more
// than the savings share, and never moves it back to the type it left.
func TestNoReplaceAndReplaceBackUnderFluctuatingPrices(t *testing.T) {
	b := newBed(t, disruption.Options{ValidationDelay: -1})
	b.pool(t, onDemand("churn-api"))
	n := typedNode("churn-api-a", "churn-api", "medium", v1alpha1.CapacityTypeOnDemand, 0, sized("web", "3", "4Gi"))
	n.Node.Labels[corev1.LabelInstanceTypeStable] = "x"
	b.node(t, n)
	b.seen(t, map[string]int{"churn-api-a": 1})
	current, replaced := "churn-api-a", 0
	for hour := range 12 {
		if hour%2 == 0 {
			b.types.set(twoTypes(0.40, 0.30))
		} else {
			b.types.set(twoTypes(0.30, 0.40))
		}
		b.round(t, time.Hour)
		reps := b.replacements(t)
		if len(reps) == replaced {
			continue
		}
		rep := reps[len(reps)-1]
		replaced++
		want := "y"
		if got := rep.Spec.Requirements; !requiresOnly(got, want) {
			t.Fatalf("hour %d: the replacement may launch %v, want only %s", hour, got, want)
		}
		b.nominate(t, current, rep.Name)
		b.initialize(t, rep, want)
		b.round(t, disruption.DefaultInterval)
		b.gone(t, current)
		b.move(t, current, rep.Name)
		current = rep.Name
	}
	if replaced != 1 {
		t.Fatalf("%d replacements over twelve hours of flipping prices, want exactly 1", replaced)
	}
	// The guard that held is the replace-back rule, not the window: the
	// window had long passed when the prices flipped back.
	for _, note := range b.rec.notes(disruption.ReasonDisruptionBlocked) {
		if strings.Contains(note, "blocked by churn") {
			t.Errorf("the recent-replacement window blocked an hour later: %s", note)
		}
	}
}

// requiresOnly reports whether the requirements allow exactly one instance type.
func requiresOnly(reqs []v1alpha1.NodeSelectorRequirementWithMinValues, instanceType string) bool {
	for _, r := range reqs {
		if r.Key == corev1.LabelInstanceTypeStable {
			return slices.Equal(r.Values, []string{instanceType})
		}
	}
	return false
}

// nominate plays the provisioner, which nominates the pods of a node marked
// for deletion to their next home.
func (b *bed) nominate(t *testing.T, from, to string) {
	t.Helper()
	pods := &corev1.PodList{}
	fatalIf(t, b.env.Client.List(t.Context(), pods, client.InNamespace(b.env.Namespace)))
	for i := range pods.Items {
		if pods.Items[i].Spec.NodeName == from {
			b.env.Cluster.Nominate(&pods.Items[i], to)
		}
	}
}

// move plays the drain and kube-scheduler: the node from is gone, and its
// pods run on the node to.
func (b *bed) move(t *testing.T, from, to string) {
	t.Helper()
	pods := &corev1.PodList{}
	fatalIf(t, b.env.Client.List(t.Context(), pods, client.InNamespace(b.env.Namespace)))
	moved := map[string]int{to: 0}
	for _, p := range pods.Items {
		if p.Spec.NodeName != from {
			continue
		}
		fatalIf(t, b.env.Client.Delete(t.Context(), &p, client.GracePeriodSeconds(0)))
		statetest.Eventually(t, 30*time.Second, func() error {
			err := b.env.Client.Get(t.Context(), client.ObjectKeyFromObject(&p), &corev1.Pod{})
			if err == nil {
				return fmt.Errorf("pod %s still exists", p.Name)
			}
			return client.IgnoreNotFound(err)
		})
		next := p.DeepCopy()
		next.ResourceVersion, next.UID, next.Spec.NodeName = "", "", to
		b.env.Create(t, next)
		moved[to]++
	}
	fatalIf(t, b.env.Client.Delete(t.Context(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: from}}))
	b.seen(t, moved)
}
