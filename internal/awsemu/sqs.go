package awsemu

import (
	"crypto/md5" //nolint:gosec // SQS defines its body digest as MD5
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"
)

type sqsState struct {
	byName      map[string]*queue
	eventQueues []string // queues every event is delivered to
}

func newSQSState() sqsState { return sqsState{byName: map[string]*queue{}} }

type queue struct {
	name       string
	url        string
	attributes map[string]string
	visibility time.Duration
	messages   []*message
	arrived    chan struct{} // closed and replaced whenever a message is enqueued
	tags       map[string]string
	created    time.Time
	modified   time.Time
}

type message struct {
	id        string
	body      string
	md5       string
	receipt   string
	visibleAt time.Time
	sentAt    time.Time
	receives  int
}

// sqsQueryCodes are the legacy (query protocol) codes SQS still sends in
// its x-amzn-query-error header, from the SQS model's awsQueryError traits,
// where they differ from the JSON error's name. The SDK reports them as the
// error's code.
var sqsQueryCodes = map[string]string{
	"QueueDoesNotExist": "AWS.SimpleQueueService.NonExistentQueue",
	"QueueNameExists":   "QueueAlreadyExists",
}

// sqsQueryError is the x-amzn-query-error header for an SQS error: the
// legacy code, then who is at fault.
func sqsQueryError(code string, status int) string {
	if legacy, ok := sqsQueryCodes[code]; ok {
		code = legacy
	}
	if status >= 500 {
		return code + ";Receiver"
	}
	return code + ";Sender"
}

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s)) //nolint:gosec // protocol-defined digest
	return hex.EncodeToString(sum[:])
}

// CreateQueue creates an SQS queue in process and returns its URL.
func (e *Emulator) CreateQueue(name string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.createQueueLocked(name, nil).url
}

func (e *Emulator) createQueueLocked(name string, attrs map[string]string) *queue {
	if q, ok := e.sqs.byName[name]; ok {
		return q
	}
	q := &queue{name: name, url: "https://sqs." + e.cfg.Region + ".amazonaws.com/" + e.cfg.AccountID + "/" + name,
		attributes: map[string]string{}, visibility: 30 * time.Second, arrived: make(chan struct{}),
		tags: map[string]string{}, created: e.clk.Now(), modified: e.clk.Now()}
	for k, v := range attrs {
		q.attributes[k] = v
	}
	if s, err := strconv.Atoi(attrs["VisibilityTimeout"]); err == nil {
		q.visibility = time.Duration(s) * time.Second
	}
	e.sqs.byName[name] = q
	return q
}

func (e *Emulator) enqueueLocked(q *queue, body string, delay time.Duration) *message {
	now := e.clk.Now()
	m := &message{id: e.newID("msg")[4:] + "-emulated", body: body, md5: md5Hex(body), visibleAt: now.Add(delay), sentAt: now}
	q.messages = append(q.messages, m)
	close(q.arrived)
	q.arrived = make(chan struct{})
	return m
}

// QueueMessages returns the bodies of the messages in a queue, visible or not.
func (e *Emulator) QueueMessages(name string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	q, ok := e.sqs.byName[name]
	if !ok {
		return nil
	}
	out := make([]string, 0, len(q.messages))
	for _, m := range q.messages {
		out = append(out, m.body)
	}
	return out
}

func (e *Emulator) queueByURLLocked(url string) (*queue, *APIError) {
	name := url[strings.LastIndex(url, "/")+1:]
	q, ok := e.sqs.byName[name]
	if !ok {
		return nil, &APIError{"QueueDoesNotExist", "The specified queue does not exist."}
	}
	return q, nil
}

func (e *Emulator) serveSQS(w http.ResponseWriter, req request) {
	switch req.action {
	case "CreateQueue":
		jsonCall(w, req, e.sqsCreateQueue)
	case "GetQueueUrl":
		jsonCall(w, req, e.sqsGetQueueURL)
	case "SendMessage":
		jsonCall(w, req, e.sqsSendMessage)
	case "ReceiveMessage":
		jsonCall(w, req, e.sqsReceiveMessage)
	case "DeleteMessage":
		jsonCall(w, req, e.sqsDeleteMessage)
	case "GetQueueAttributes":
		jsonCall(w, req, e.sqsGetQueueAttributes)
	case "PurgeQueue":
		jsonCall(w, req, e.sqsPurgeQueue)
	case "DeleteQueue":
		jsonCall(w, req, e.sqsDeleteQueue)
	default:
		if h, ok := sqsHandlers[req.action]; ok {
			h(e, w, req)
			return
		}
		writeJSONError(w, "sqs", http.StatusBadRequest, "UnsupportedOperation", "unknown SQS action "+req.action)
	}
}
