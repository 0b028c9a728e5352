package e2e_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	nodeutil "k8s.io/component-helpers/node/util"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/interruption"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

// markWatch records, per Node, the kinds of the writes that changed its
// interruption mark, in order.
type markWatch struct {
	mu   sync.Mutex
	last map[string]interruption.Mark
	// node -> the kind each change of its mark left
	changes map[string][]string
}

// watchMarks watches every Node from now on.
func watchMarks(t *testing.T, b *bed) *markWatch {
	t.Helper()
	cs, err := kubernetes.NewForConfig(b.ControlPlane.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	m := &markWatch{last: map[string]interruption.Mark{}, changes: map[string][]string{}}
	for i := range list.Items {
		m.see(&list.Items[i])
	}
	go func() {
		for ev := range w.ResultChan() {
			if node, ok := ev.Object.(*corev1.Node); ok && ev.Type != watch.Deleted {
				m.see(node)
			}
		}
	}()
	return m
}

func (m *markWatch) see(node *corev1.Node) {
	mark, _ := interruption.Marks(node)
	m.mu.Lock()
	defer m.mu.Unlock()
	prev, known := m.last[node.Name]
	if known && mark.Kind != "" && (mark.Kind != prev.Kind || mark.EventID != prev.EventID || !mark.Deadline.Equal(prev.Deadline)) {
		m.changes[node.Name] = append(m.changes[node.Name], mark.Kind)
	}
	m.last[node.Name] = mark
}

// markedFirst checks that the first changes of each Node of want (name ->
// kinds) marked it with those kinds, in order (later events may mark it
// again: the state changes of an instance shutting down), and that no other
// Node was marked.
func (m *markWatch) markedFirst(want map[string][]string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for name, kinds := range want {
		got := m.changes[name]
		if len(got) < len(kinds) || !slices.Equal(got[:len(kinds)], kinds) {
			return fmt.Errorf("node %s: marked %v; want %v first", name, got, kinds)
		}
	}
	for name, got := range m.changes {
		if _, ok := want[name]; !ok && len(got) > 0 {
			return fmt.Errorf("node %s, which no event names, was marked %v", name, got)
		}
	}
	return nil
}

// availability samples, while the interrupted node is replaced, how many
// web pods are available, when the first of the node's pods was evicted,
// and when a new node of the pool became Ready.
type availability struct {
	mu                 sync.Mutex
	least, onSpot      int
	evicted, readyAt   time.Time
	replacement, error string
}

func watchAvailability(t *testing.T, b *bed, spot string) *availability {
	t.Helper()
	a := &availability{least: 3, onSpot: 3}
	before := map[string]bool{}
	var nodes corev1.NodeList
	if err := b.Admin.List(context.Background(), &nodes); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		before[n.Name] = true
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	t.Cleanup(func() { close(done); <-stopped })
	go func() {
		defer close(stopped)
		ticker := time.NewTicker(50 * time.Millisecond)
		defer ticker.Stop()
		for {
			a.sample(b, spot, before)
			select {
			case <-done:
				return
			case <-ticker.C:
			}
		}
	}()
	return a
}

func (a *availability) sample(b *bed, spot string, before map[string]bool) {
	ctx := context.Background()
	pods, err := b.pods(lambdaNS, "web")
	var nodes corev1.NodeList
	if err == nil {
		err = b.Admin.List(ctx, &nodes, client.MatchingLabels{v1alpha1.LabelNodePool: poolName})
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err != nil {
		a.error = err.Error()
		return
	}
	available, onSpot := 0, 0
	for _, p := range pods {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			available++
		}
		if p.Spec.NodeName == spot && p.DeletionTimestamp == nil {
			onSpot++
		}
	}
	// An evicted pod with no grace period goes within one sample: the first
	// drop in the spot node's pods is the first eviction.
	if onSpot < a.onSpot && a.evicted.IsZero() {
		a.evicted = time.Now()
	}
	a.onSpot = onSpot
	a.least = min(a.least, available)
	for _, n := range nodes.Items {
		if _, c := nodeutil.GetNodeCondition(&n.Status, corev1.NodeReady); !before[n.Name] && c != nil && c.Status == corev1.ConditionTrue && a.readyAt.IsZero() {
			a.readyAt, a.replacement = time.Now(), n.Name
		}
	}
}

// expectReplaced waits until the interrupted node and its instance are gone
// and the three pods run elsewhere, and checks no pod was lost on the way.
func (b *bed) expectReplaced(t *testing.T, spot *corev1.Node, a *availability) {
	t.Helper()
	ctx := context.Background()
	b.eventually(settle, func() error {
		if err := b.Admin.Get(ctx, client.ObjectKeyFromObject(spot), &corev1.Node{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the interrupted node %s is still there (%v)", spot.Name, err)
		}
		in, ok := b.Emulator.Instance(instanceOf(spot))
		if ok && in.State != awsemu.StateTerminated && in.State != awsemu.StateShuttingDown {
			return fmt.Errorf("the interrupted instance is %s", in.State)
		}
		return b.running(lambdaNS, "web", 3)()
	})
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.least < 2 {
		t.Errorf("only %d web pods were available at one point: the PDB keeps 2", a.least)
	}
	t.Logf("replacement %s Ready at %s; first eviction at %s; fewest available pods %d",
		a.replacement, a.readyAt.Format(time.StampMilli), a.evicted.Format(time.StampMilli), a.least)
	expectReplacementReadyBeforeEviction(t, a)
}

// expectReplacementReadyBeforeEviction checks the interrupted node's
// replacement was Ready before the first of its pods was evicted.
func expectReplacementReadyBeforeEviction(t *testing.T, a *availability) {
	t.Helper()
	if a.readyAt.IsZero() || a.evicted.IsZero() || !a.readyAt.Before(a.evicted) {
		t.Errorf("replacement Ready at %v, first eviction at %v: want the replacement Ready first", a.readyAt, a.evicted)
	}
}
