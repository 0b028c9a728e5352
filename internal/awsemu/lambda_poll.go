package awsemu

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// retryQueue is how long a poller waits before looking again for a queue
// that is gone.
const retryQueue = time.Second

// sqsRecord is one record of the SQS event Lambda hands a function.
type sqsRecord struct {
	MessageID         string            `json:"messageId"`
	ReceiptHandle     string            `json:"receiptHandle"`
	Body              string            `json:"body"`
	Attributes        map[string]string `json:"attributes"`
	MessageAttributes map[string]any    `json:"messageAttributes"`
	MD5OfBody         string            `json:"md5OfBody"`
	EventSource       string            `json:"eventSource"`
	EventSourceARN    string            `json:"eventSourceARN"`
	AWSRegion         string            `json:"awsRegion"`
}

// startPollerLocked starts m's poller.
func (e *Emulator) startPollerLocked(m *mapping) {
	p := &poller{stop: make(chan struct{}), done: make(chan struct{})}
	m.poller, m.state = p, "Enabled"
	go e.poll(m, p)
}

// poll runs a mapping as Lambda's pollers do: it receives up to BatchSize
// records (waiting up to the batching window for more), invokes the
// function with them, one batch at a time, and deletes the records that
// succeeded. A function error, or an answer that is not a valid
// ReportBatchItemFailures response, leaves the whole batch on the queue; a
// reported failure leaves that record. What is left comes back after the
// queue's visibility timeout.
func (e *Emulator) poll(m *mapping, p *poller) {
	defer close(p.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-p.stop:
			cancel()
		case <-p.done:
		}
	}()
	for {
		batch, wake, next := e.takeBatch(m, m.batchSize)
		if len(batch) == 0 {
			if !e.await(p, wake, next) {
				return
			}
			continue
		}
		received := e.clk.Now()
		batch = e.fillWindow(m, p, batch)
		e.deliverBatch(ctx, m, batch, received)
		select {
		case <-p.stop:
			return
		default:
		}
	}
}

// takeBatch receives up to n records of m's queue; when there are none it
// returns what to wait on: the queue's arrival signal and how long until a
// record in flight becomes visible again (0 for none).
func (e *Emulator) takeBatch(m *mapping, n int) ([]sqsMessage, <-chan struct{}, time.Duration) {
	e.mu.Lock()
	q, ok := e.queueByARNLocked(m.sourceARN)
	url := ""
	if ok {
		url = q.url
		_, ok = e.roleMayLocked(e.executionRoleLocked(m), q, "sqs:ReceiveMessage") // polled as the function's role
	}
	e.mu.Unlock()
	if !ok {
		return nil, nil, retryQueue
	}
	var out []sqsMessage
	var wake <-chan struct{}
	for len(out) < n {
		msgs, arrived, err := e.receiveOnce(receiveMessageInput{QueueURL: url, MaxNumberOfMessages: min(n-len(out), 10),
			AttributeNames: []string{"All"}})
		if err != nil {
			return out, nil, retryQueue
		}
		out, wake = append(out, msgs...), arrived
		if len(msgs) == 0 {
			break
		}
	}
	return out, wake, e.nextVisible(m)
}

// nextVisible is how long until the first record in flight on m's queue
// becomes visible again; 0 when none is in flight.
func (e *Emulator) nextVisible(m *mapping) time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	q, ok := e.queueByARNLocked(m.sourceARN)
	if !ok {
		return retryQueue
	}
	now := e.clk.Now()
	var next time.Duration
	for _, msg := range q.messages {
		if d := msg.visibleAt.Sub(now); d > 0 && (next == 0 || d < next) {
			next = d
		}
	}
	return next
}

// await waits for a record to arrive or come back, or for the poller to
// stop (false).
func (e *Emulator) await(p *poller, wake <-chan struct{}, next time.Duration) bool {
	var timer <-chan time.Time
	if next > 0 {
		timer = e.clk.After(next)
	}
	select {
	case <-p.stop:
		return false
	case <-wake:
	case <-timer:
	}
	return true
}

// fillWindow waits up to the batching window for the batch to fill.
func (e *Emulator) fillWindow(m *mapping, p *poller, batch []sqsMessage) []sqsMessage {
	if m.window == 0 || len(batch) >= m.batchSize {
		return batch
	}
	deadline := e.clk.After(time.Duration(m.window) * time.Second)
	for len(batch) < m.batchSize {
		more, wake, next := e.takeBatch(m, m.batchSize-len(batch))
		batch = append(batch, more...)
		if len(more) > 0 {
			continue
		}
		var timer <-chan time.Time
		if next > 0 {
			timer = e.clk.After(next)
		}
		select {
		case <-p.stop:
			return batch
		case <-deadline:
			return batch
		case <-wake:
		case <-timer:
		}
	}
	return batch
}

// deliverBatch invokes the function with the batch, deletes the records
// that succeeded and records the invocation.
func (e *Emulator) deliverBatch(ctx context.Context, m *mapping, batch []sqsMessage, received time.Time) {
	inv := Invocation{MappingUUID: m.uuid, Received: received}
	records := make([]sqsRecord, 0, len(batch))
	for _, msg := range batch {
		inv.MessageIDs = append(inv.MessageIDs, msg.MessageID)
		attrs := map[string]string{"SenderId": "AIDAEMULATOREVENTS0001"}
		for k, v := range msg.Attributes {
			attrs[k] = v
		}
		records = append(records, sqsRecord{MessageID: msg.MessageID, ReceiptHandle: msg.ReceiptHandle, Body: msg.Body,
			Attributes: attrs, MessageAttributes: map[string]any{}, MD5OfBody: msg.MD5OfBody, EventSource: "aws:sqs",
			EventSourceARN: m.sourceARN, AWSRegion: e.cfg.Region})
	}
	payload, _ := json.Marshal(map[string][]sqsRecord{"Records": records}) //nolint:errchkjson // strings and maps of strings
	out, err := e.runFunction(ctx, m.function, payload)
	inv.Returned = e.clk.Now()
	switch {
	case err != nil:
		inv.Error = err.Error()
	case m.reportFailures:
		inv.Failed, err = batchFailures(out, inv.MessageIDs)
		if err != nil {
			inv.Error, inv.Failed = err.Error(), nil
		}
	}
	if inv.Error == "" {
		inv.Deleted = e.deleteDelivered(m, batch, inv.Failed)
	}
	e.mu.Lock()
	m.invocations = append(m.invocations, inv)
	e.mu.Unlock()
}

// runFunction invokes the named function once.
func (e *Emulator) runFunction(ctx context.Context, name string, payload []byte) ([]byte, error) {
	e.mu.Lock()
	fn, apiErr := e.functionLocked(name)
	e.mu.Unlock()
	if apiErr != nil {
		return nil, apiErr
	}
	return e.runInstance(ctx, fn, payload)
}

// batchFailures reads a ReportBatchItemFailures response. As Lambda does,
// it takes an empty or null response or list as no failure, and refuses
// (the whole batch failed) invalid JSON and entries whose itemIdentifier is
// missing, empty, under another key, or not a record of the batch.
func batchFailures(out []byte, ids []string) ([]string, error) {
	trimmed := bytes.TrimSpace(out)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return nil, nil
	}
	var resp struct {
		BatchItemFailures []map[string]any `json:"batchItemFailures"`
	}
	if err := json.Unmarshal(trimmed, &resp); err != nil {
		return nil, fmt.Errorf("the function's response is not a valid batch item failures response: %v", err)
	}
	var failed []string
	for _, f := range resp.BatchItemFailures {
		id, ok := f["itemIdentifier"].(string)
		if !ok || id == "" || len(f) != 1 || !slices.Contains(ids, id) {
			return nil, errors.New("a batch item failure does not name a record of the batch in itemIdentifier")
		}
		failed = append(failed, id)
	}
	return failed, nil
}

// deleteDelivered deletes the batch's records that did not fail.
func (e *Emulator) deleteDelivered(m *mapping, batch []sqsMessage, failed []string) []string {
	e.mu.Lock()
	q, ok := e.queueByARNLocked(m.sourceARN)
	if ok {
		_, ok = e.roleMayLocked(e.executionRoleLocked(m), q, "sqs:DeleteMessage")
	}
	e.mu.Unlock()
	if !ok {
		return nil
	}
	var deleted []string
	for _, msg := range batch {
		if slices.Contains(failed, msg.MessageID) {
			continue
		}
		if _, err := e.sqsDeleteMessage(deleteMessageInput{QueueURL: q.url, ReceiptHandle: msg.ReceiptHandle}); err == nil {
			deleted = append(deleted, msg.MessageID)
		}
	}
	return deleted
}
