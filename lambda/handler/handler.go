// Package handler is the interruption Lambda's logic: for each record of an
// SQS batch (or one EventBridge event invoked directly) it parses the event
// with the messages registry and marks the Nodes of the instances it names.
//
// A record that cannot be parsed, or whose marking fails on an API error, is
// reported as that record's failure (ReportBatchItemFailures), so SQS
// delivers it again and the other records stand. An event no parser reads,
// or one that asks for nothing, is acknowledged and counted. Marking is
// idempotent, so redelivery changes nothing.
package handler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/hashicorp/go-hclog"
	"k8s.io/utils/clock"

	"github.com/stowage-dev/stowage/controller/interruption"
	"github.com/stowage-dev/stowage/lambda/marker"
	"github.com/stowage-dev/stowage/lambda/messages"
)

// NodeMarker marks the Node of an instance; lambda/marker implements it.
type NodeMarker interface {
	// NewBatch says that a batch of events arrived (see marker.Marker).
	NewBatch()
	// Mark marks the instance's Node and returns the outcome and the Node's
	// name; an error is the API server's, and the event should come again.
	Mark(ctx context.Context, instanceID string, m interruption.Mark) (marker.Result, string, error)
	// MarkReservation marks every Node of a capacity reservation and
	// returns, per Node, the outcome; errors as Mark's.
	MarkReservation(ctx context.Context, reservationID string, m interruption.Mark) (map[string]marker.Result, error)
}

// Rebalance settings: what a rebalance recommendation does.
const (
	// RebalanceIgnore acknowledges rebalance recommendations and marks nothing.
	RebalanceIgnore = "ignore"
	// RebalanceMark marks the Node; the controller replaces it only with
	// its ReplaceOnRebalance option.
	RebalanceMark = "mark"
)

// Config is the handler's behaviour.
type Config struct {
	// Rebalance is RebalanceIgnore (the default when empty) or RebalanceMark.
	Rebalance string
}

// Options are the handler's outputs and ids; the zero value logs and
// measures nothing and takes request ids from the Lambda context.
type Options struct {
	// Logger receives one line per record, with request_id and message_id.
	Logger hclog.Logger
	// Metrics receives CloudWatch embedded-metric-format lines.
	Metrics io.Writer
	// RequestID returns the invocation's request id; LambdaRequestID when nil.
	RequestID func(context.Context) string
	// Workers is how many records of a batch are handled at once (1 when
	// zero): the records are independent, and the Lambda's latency is the
	// batch's slowest record. Outcomes, failures and metrics keep the
	// records' order whatever it is.
	Workers int
}

// Handler handles the interruption queue's events.
type Handler struct {
	registry *messages.Registry
	marker   NodeMarker
	clk      clock.PassiveClock
	cfg      Config
	log      hclog.Logger
	metrics  io.Writer
	reqID    func(context.Context) string
	workers  int
}

// New returns a handler parsing with registry and marking through marker;
// clk stamps the metrics.
func New(registry *messages.Registry, marker NodeMarker, clk clock.PassiveClock, cfg Config, opts Options) *Handler {
	if cfg.Rebalance == "" {
		cfg.Rebalance = RebalanceIgnore
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Metrics == nil {
		opts.Metrics = io.Discard
	}
	if opts.RequestID == nil {
		opts.RequestID = LambdaRequestID
	}
	return &Handler{registry: registry, marker: marker, clk: clk, cfg: cfg, log: opts.Logger,
		metrics: opts.Metrics, reqID: opts.RequestID, workers: max(opts.Workers, 1)}
}

// LambdaRequestID is the request id of the invocation in ctx.
func LambdaRequestID(ctx context.Context) string {
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		return lc.AwsRequestID
	}
	return ""
}

// ErrUnknownPayload is returned for a payload that is neither an SQS event
// nor an EventBridge event.
var ErrUnknownPayload = errors.New("the payload is neither an SQS event (Records) nor an EventBridge event (detail-type)")

// Invoke is the Lambda's entry point. An SQS event from the event source
// mapping gets the records that failed back (never an error); one
// EventBridge event invoked directly gets an error when it fails, so that
// Lambda retries it.
func (h *Handler) Invoke(ctx context.Context, payload json.RawMessage) (any, error) {
	var probe struct {
		Records    json.RawMessage `json:"Records"`
		DetailType string          `json:"detail-type"`
	}
	if err := json.Unmarshal(payload, &probe); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnknownPayload, err)
	}
	switch {
	case probe.Records != nil:
		var ev events.SQSEvent
		if err := json.Unmarshal(payload, &ev); err != nil {
			return nil, fmt.Errorf("reading the SQS event: %w", err)
		}
		return h.HandleSQS(ctx, ev), nil
	case probe.DetailType != "":
		return nil, h.HandleEvent(ctx, payload)
	}
	return nil, ErrUnknownPayload
}

// HandleSQS handles a batch and returns the records that failed.
func (h *Handler) HandleSQS(ctx context.Context, ev events.SQSEvent) events.SQSEventResponse {
	h.marker.NewBatch()
	rid := h.reqID(ctx)
	outs := make([]outcome, len(ev.Records))
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(h.workers, len(ev.Records)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				rec := ev.Records[i]
				outs[i] = h.handle(ctx, h.log.With("request_id", rid, "message_id", rec.MessageId), []byte(rec.Body))
			}
		}()
	}
	for i := range ev.Records {
		work <- i
	}
	close(work)
	wg.Wait()
	tally := newTally()
	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	for i, out := range outs {
		tally.add(out)
		if out.failed() {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: ev.Records[i].MessageId})
		}
	}
	tally.write(h.metrics, h.clk.Now(), rid)
	return resp
}

// HandleEvent handles one EventBridge event invoked directly; its id stands
// for the message id.
func (h *Handler) HandleEvent(ctx context.Context, body []byte) error {
	h.marker.NewBatch()
	rid := h.reqID(ctx)
	var id struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(body, &id) // a missing id is the parser's to report
	out := h.handle(ctx, h.log.With("request_id", rid, "message_id", id.ID), body)
	tally := newTally()
	tally.add(out)
	tally.write(h.metrics, h.clk.Now(), rid)
	return out.err
}
