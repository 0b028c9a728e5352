package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/scheduling"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/lambda/handler"
	"github.com/stowage-dev/stowage/lambda/marker"
	"github.com/stowage-dev/stowage/lambda/messages/registry"
	"github.com/stowage-dev/stowage/lambda/messages/spotinterruption"
)

// chaosInterruptions is the soak's interruption path and its invariant: the
// emulator's EventBridge events reach the interruption Lambda's own handler
// in process, one SQS record each (the whole path, with SQS and the runtime
// emulator, is TestInterruptionLambdaEndToEnd's), and when an interrupted
// instance terminates no pod may still be on its Node, unless its grace is
// longer than the notice or it tolerates the taints that keep pods off a
// draining or interrupted node.
type chaosInterruptions struct {
	b *bed
	h *handler.Handler

	mu     sync.Mutex
	queued []awsemu.Event
	// instance id -> when its notice came
	noticed map[string]time.Time
	// instance ids whose termination was checked
	checked map[string]bool
	lost    []string
}

// watchInterruptions starts delivering the emulator's events and checking
// interrupted instances until the test ends.
func (b *bed) watchInterruptions() *chaosInterruptions {
	ci := &chaosInterruptions{b: b, noticed: map[string]time.Time{}, checked: map[string]bool{},
		h: handler.New(registry.New(), marker.New(b.Admin), clock.RealClock{}, handler.Config{}, handler.Options{})}
	b.Emulator.SetEventSink(awsemu.SinkFunc(func(ev awsemu.Event) {
		ci.mu.Lock()
		defer ci.mu.Unlock()
		ci.queued = append(ci.queued, ev)
	}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		ticker := time.NewTicker(200 * time.Millisecond)
		defer ticker.Stop()
		for {
			ci.deliver(ctx)
			ci.check(ctx)
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
		}
	}()
	b.root.Cleanup(func() { cancel(); <-done; b.Emulator.SetEventSink(nil) })
	return ci
}

// interrupt sends a spot interruption notice to n spot instances whose
// Nodes run pods of the soak, waiting for that many to exist: the round may
// come before the scale-up's nodes have registered and taken pods.
func (ci *chaosInterruptions) interrupt(n int) {
	var ids []string
	ci.b.eventually(3*time.Minute, func() error {
		ids = ci.interruptible()
		if len(ids) < n {
			return fmt.Errorf("%d spot instances run pods of the soak, want %d to interrupt", len(ids), n)
		}
		return nil
	})
	for _, id := range ids[:n] {
		if err := ci.b.Emulator.Interrupt(id); err != nil {
			ci.b.t.Fatal(err)
		}
		ci.mu.Lock()
		ci.noticed[id] = time.Now()
		ci.mu.Unlock()
	}
}

// interruptible lists, sorted, the running spot instances not yet
// interrupted whose Nodes run pods of the soak.
func (ci *chaosInterruptions) interruptible() []string {
	var pods corev1.PodList
	if err := ci.b.Admin.List(context.Background(), &pods, client.InNamespace(chaosNS)); err != nil {
		ci.b.t.Fatal(err)
	}
	busy := map[string]bool{}
	for _, p := range pods.Items {
		busy[p.Spec.NodeName] = p.Spec.NodeName != ""
	}
	var ids []string
	for id, node := range ci.b.Bridge.Registered() {
		in, ok := ci.b.Emulator.Instance(id)
		if ok && busy[node] && in.CapacityType == awsemu.CapacitySpot && in.State == awsemu.StateRunning && in.InterruptAt.IsZero() {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// deliver hands the queued events to the handler, one record each.
func (ci *chaosInterruptions) deliver(ctx context.Context) {
	ci.mu.Lock()
	queued := ci.queued
	ci.queued = nil
	ci.mu.Unlock()
	for i, ev := range queued {
		body, err := json.Marshal(ev)
		if err != nil {
			continue
		}
		batch := events.SQSEvent{Records: []events.SQSMessage{{MessageId: fmt.Sprintf("chaos-%s-%d", ev.ID, i), Body: string(body), EventSource: "aws:sqs"}}}
		if resp := ci.h.HandleSQS(ctx, batch); len(resp.BatchItemFailures) > 0 {
			ci.mu.Lock()
			ci.queued = append(ci.queued, ev) // SQS would deliver it again
			ci.mu.Unlock()
		}
	}
}

// check looks at every interrupted instance that has begun to terminate, once.
func (ci *chaosInterruptions) check(ctx context.Context) {
	ci.mu.Lock()
	var due []string
	for id := range ci.noticed {
		if !ci.checked[id] {
			due = append(due, id)
		}
	}
	ci.mu.Unlock()
	for _, id := range due {
		in, ok := ci.b.Emulator.Instance(id)
		if ok && in.State != awsemu.StateShuttingDown && in.State != awsemu.StateTerminated {
			continue
		}
		left := ci.podsLeft(ctx, ci.b.Bridge.Registered()[id], in.InterruptAt)
		ci.mu.Lock()
		ci.checked[id] = true
		ci.lost = append(ci.lost, left...)
		ci.mu.Unlock()
	}
}

// podsLeft names the pods still on the node at its instance's termination
// that the invariant holds to.
func (ci *chaosInterruptions) podsLeft(ctx context.Context, node string, terminated time.Time) []string {
	if node == "" {
		return nil
	}
	var pods corev1.PodList
	if err := ci.b.Admin.List(ctx, &pods, client.MatchingFields{"spec.nodeName": node}); err != nil {
		return []string{"listing the pods of " + node + ": " + err.Error()}
	}
	var out []string
	for i := range pods.Items {
		switch p := &pods.Items[i]; {
		case scheduling.Finished(p) || scheduling.OwnedByDaemonSet(p) || scheduling.IsMirror(p):
		case staysOnInterrupted(p) || grace(p) > spotinterruption.Notice:
		case p.DeletionTimestamp != nil && !p.DeletionTimestamp.After(terminated): // gone by then, its grace honoured
		default:
			out = append(out, fmt.Sprintf("%s/%s on %s", p.Namespace, p.Name, node))
		}
	}
	return out
}

// settled waits until every interrupted instance has terminated and been
// checked, and returns how many there were and the pods found on them.
func (ci *chaosInterruptions) settled() (interrupted int, lost []string) {
	ci.b.eventually(spotinterruption.Notice+settle, func() error {
		ci.mu.Lock()
		defer ci.mu.Unlock()
		if len(ci.checked) < len(ci.noticed) {
			return fmt.Errorf("%d of %d interrupted instances terminated", len(ci.checked), len(ci.noticed))
		}
		return nil
	})
	ci.mu.Lock()
	defer ci.mu.Unlock()
	return len(ci.noticed), slices.Clone(ci.lost)
}

func staysOnInterrupted(p *corev1.Pod) bool {
	for _, t := range []corev1.Taint{v1alpha1.DisruptedNoScheduleTaint,
		{Key: v1alpha1.TaintKeyInterrupted, Value: v1alpha1.InterruptionKindSpotInterruption, Effect: corev1.TaintEffectNoSchedule}} {
		if scheduling.Tolerates([]corev1.Taint{t}, p.Spec.Tolerations) == nil {
			return true
		}
	}
	return false
}

func grace(p *corev1.Pod) time.Duration {
	if s := p.Spec.TerminationGracePeriodSeconds; s != nil {
		return time.Duration(*s) * time.Second
	}
	return corev1.DefaultTerminationGracePeriodSeconds * time.Second
}
