package simulate

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/interruption"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

// spotWarningLead is how long before termination EC2 warns a spot instance.
const spotWarningLead = 2 * time.Minute

// interruptionLambda plays the interruption Lambda's part: each EventBridge
// event the capacity model raises is read as the Lambda reads it, and the
// affected Node is marked with interruption.MarkNode, the one writer of the
// mark the interruption controller acts on. Events queue while the emulator
// holds its lock and are delivered at the next step.
type interruptionLambda struct {
	w      *world
	queued []awsemu.Event
	// marked is told the name of each Node the Lambda marked.
	marked func(node string)
}

func newInterruptionLambda(w *world, marked func(string)) *interruptionLambda {
	l := &interruptionLambda{w: w, marked: marked}
	w.emu.SetEventSink(awsemu.SinkFunc(func(ev awsemu.Event) { l.queued = append(l.queued, ev) }))
	return l
}

// deliver handles the queued events.
func (l *interruptionLambda) deliver(ctx context.Context) error {
	events := l.queued
	l.queued = nil
	for _, ev := range events {
		if err := l.handle(ctx, ev); err != nil {
			return fmt.Errorf("event %s (%s): %w", ev.ID, ev.DetailType, err)
		}
	}
	return nil
}

func (l *interruptionLambda) handle(ctx context.Context, ev awsemu.Event) error {
	if ev.DetailType != "EC2 Spot Instance Interruption Warning" {
		return nil
	}
	var detail struct {
		InstanceID string `json:"instance-id"`
	}
	if err := json.Unmarshal(ev.Detail, &detail); err != nil {
		return err
	}
	at, err := time.Parse(time.RFC3339, ev.Time)
	if err != nil {
		return err
	}
	in, ok := l.w.instances[detail.InstanceID]
	if !ok || in.node == "" {
		return nil
	}
	node := &corev1.Node{}
	if err := l.w.kube.Get(ctx, client.ObjectKey{Name: in.node}, node); err != nil {
		return client.IgnoreNotFound(err)
	}
	mark := interruption.Mark{Kind: v1alpha1.InterruptionKindSpotInterruption, Deadline: at.Add(spotWarningLead), EventID: ev.ID}
	if !interruption.MarkNode(node, mark) {
		return nil
	}
	if err := l.w.kube.Update(ctx, node); err != nil {
		return err
	}
	l.marked(node.Name)
	return nil
}
