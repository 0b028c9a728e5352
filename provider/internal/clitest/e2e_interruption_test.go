package clitest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/lambda/marker"
)

// spotInterruptionIsHandled interrupts the spot instance running most of
// the workload: AWS's warning goes to EventBridge, whose rule (Terraform's)
// sends it to the queue (whose policy lets only that rule), whose event
// source mapping (Terraform's) invokes the Lambda (Terraform's, run by RIE
// as its role), which marks the Node through its access entry; the
// controller replaces the Node before the instance goes, and the PDB's
// three pods stay available all along.
func (e *e2e) spotInterruptionIsHandled(t *testing.T) {
	node := e.busiestNode(t)
	watch := e.watchNode(t, node.Name)
	id := marker.InstanceID(node.Spec.ProviderID)
	if err := e.Bed.Emulator.Interrupt(id); err != nil {
		t.Fatal(err)
	}
	e.eventually(t, func() error {
		if err := e.Bed.Admin.Get(context.Background(), client.ObjectKeyFromObject(node), &corev1.Node{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the interrupted node %s is still there (%v)", node.Name, err)
		}
		in, ok := e.Bed.Emulator.Instance(id)
		if ok && in.State != awsemu.StateTerminated && in.State != awsemu.StateShuttingDown {
			return fmt.Errorf("the interrupted instance is %s", in.State)
		}
		return e.running("storefront", 4, "")
	})
	watch.stop()
	// The warning's mark; the state changes of the termination that follows mark the node again.
	if !slices.Contains(watch.kinds, v1alpha1.InterruptionKindSpotInterruption) {
		t.Errorf("the node's marks were %v, want the Lambda's %s among them", watch.kinds, v1alpha1.InterruptionKindSpotInterruption)
	}
	if watch.least < 3 {
		t.Errorf("only %d storefront pods were running at one point: the PDB keeps 3", watch.least)
	}
	if in, _ := e.Bed.Emulator.Instance(id); !in.InterruptAt.IsZero() && watch.gone.After(in.InterruptAt) {
		t.Errorf("the node went at %v, after the instance's deadline %v", watch.gone, in.InterruptAt)
	}
	if logs := e.Functions.Logs(); !strings.Contains(logs, id) {
		t.Errorf("the Lambda's logs do not name the instance %s:\n%s", id, lastLines(logs, 20))
	}
	t.Logf("node %s marked %v and replaced; fewest storefront pods running: %d", node.Name, watch.kinds, watch.least)
}

// busiestNode is the node running the most storefront pods.
func (e *e2e) busiestNode(t *testing.T) *corev1.Node {
	t.Helper()
	var pods corev1.PodList
	if err := e.Bed.Admin.List(context.Background(), &pods, client.InNamespace(e2eNamespace), client.MatchingLabels{"app": "storefront"}); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	busiest := ""
	for _, p := range pods.Items {
		count[p.Spec.NodeName]++
		if count[p.Spec.NodeName] > count[busiest] {
			busiest = p.Spec.NodeName
		}
	}
	node := &corev1.Node{}
	if err := e.Bed.Admin.Get(context.Background(), client.ObjectKey{Name: busiest}, node); err != nil {
		t.Fatal(err)
	}
	return node
}

// nodeWatch samples the interrupted node and the workload until stopped:
// the mark the node carried, when it went, and the fewest pods running.
type nodeWatch struct {
	mu    sync.Mutex
	kinds []string // the marks the node carried, in order
	gone  time.Time
	least int
	done  chan struct{}
	ended chan struct{}
}

func (e *e2e) watchNode(t *testing.T, name string) *nodeWatch {
	w := &nodeWatch{least: 4, done: make(chan struct{}), ended: make(chan struct{})}
	go func() {
		defer close(w.ended)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			w.sample(e, name)
			select {
			case <-w.done:
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(w.stop)
	return w
}

func (w *nodeWatch) sample(e *e2e, name string) {
	ctx := context.Background()
	var node corev1.Node
	err := e.Bed.Admin.Get(ctx, client.ObjectKey{Name: name}, &node)
	var pods corev1.PodList
	listErr := e.Bed.Admin.List(ctx, &pods, client.InNamespace(e2eNamespace), client.MatchingLabels{"app": "storefront"})
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case err == nil && node.Annotations[v1alpha1.AnnotationInterruptionKind] != "":
		if k := node.Annotations[v1alpha1.AnnotationInterruptionKind]; !slices.Contains(w.kinds, k) {
			w.kinds = append(w.kinds, k)
		}
	case apierrors.IsNotFound(err) && w.gone.IsZero():
		w.gone = time.Now()
	}
	if listErr != nil {
		return
	}
	running := 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			running++
		}
	}
	w.least = min(w.least, running)
}

func (w *nodeWatch) stop() {
	select {
	case <-w.done:
	default:
		close(w.done)
	}
	<-w.ended
}
