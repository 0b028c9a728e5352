package simulate

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/lambda/handler"
	"github.com/stowage-dev/stowage/lambda/marker"
	"github.com/stowage-dev/stowage/lambda/messages/registry"
)

// sqsBatch is the largest batch the interruption queue's event source
// mapping hands the Lambda.
const sqsBatch = 10

// interruptionLambda runs the interruption Lambda's own handler
// (lambda/handler) on the EventBridge events the capacity model raises, as
// the queue delivers them: each event's JSON is the body of an SQS record, in
// batches of up to ten, and the handler parses and marks through the
// simulated API server. Events queue while the emulator holds its lock and
// are delivered at the next step. Message and request ids count up, so runs
// repeat.
type interruptionLambda struct {
	h        *handler.Handler
	queued   []awsemu.Event
	messages int
	requests int
}

func newInterruptionLambda(w *world, marked func(string)) *interruptionLambda {
	l := &interruptionLambda{}
	kube := markedWrites{Client: w.kube, marked: marked}
	l.h = handler.New(registry.New(), marker.New(kube), w.clk, handler.Config{}, handler.Options{
		RequestID: func(context.Context) string { l.requests++; return fmt.Sprintf("sim-request-%d", l.requests) },
	})
	w.emu.SetEventSink(awsemu.SinkFunc(func(ev awsemu.Event) { l.queued = append(l.queued, ev) }))
	return l
}

// deliver hands the queued events to the handler. A record the handler
// reports failed is a bug here: the events are AWS's own shapes and the
// simulated API server does not fail.
func (l *interruptionLambda) deliver(ctx context.Context) error {
	queued := l.queued
	l.queued = nil
	for start := 0; start < len(queued); start += sqsBatch {
		batch := events.SQSEvent{}
		for _, ev := range queued[start:min(start+sqsBatch, len(queued))] {
			body, err := json.Marshal(ev)
			if err != nil {
				return fmt.Errorf("encoding event %s: %w", ev.ID, err)
			}
			l.messages++
			batch.Records = append(batch.Records, events.SQSMessage{MessageId: fmt.Sprintf("sim-message-%d", l.messages),
				Body: string(body), EventSource: "aws:sqs", AWSRegion: ev.Region})
		}
		if resp := l.h.HandleSQS(ctx, batch); len(resp.BatchItemFailures) > 0 {
			return fmt.Errorf("the interruption lambda failed records %v", resp.BatchItemFailures)
		}
	}
	return nil
}

// markedWrites tells marked the name of every Node the handler updates,
// which is how the interruption controller's watch hears of the mark.
type markedWrites struct {
	client.Client
	marked func(node string)
}

func (m markedWrites) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if err := m.Client.Update(ctx, obj, opts...); err != nil {
		return err
	}
	m.marked(obj.GetName())
	return nil
}
