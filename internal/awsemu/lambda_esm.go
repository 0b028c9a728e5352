package awsemu

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// mapping is an event source mapping from an SQS queue to a function: while
// enabled, its poller receives batches from the queue and invokes the
// function with them (see poll).
type mapping struct {
	uuid, function, sourceARN string
	batchSize, window         int // records, seconds
	reportFailures            bool
	state                     string
	lastModified              time.Time
	invocations               []Invocation
	// enabled is what the user last asked for; poller runs while it is
	// set, and is nil while none runs.
	enabled bool
	poller  *poller
}

// poller is one run of a mapping's polling goroutine.
type poller struct {
	stop chan struct{} // closed to stop it
	done chan struct{} // closed when it has returned
	once sync.Once
}

// halt stops the poller and waits for it to return.
func (p *poller) halt() {
	p.once.Do(func() { close(p.stop) })
	<-p.done
}

// Invocation is one batch an event source mapping handed its function.
type Invocation struct {
	// MappingUUID names the event source mapping.
	MappingUUID string
	// Received is when the batch was taken off the queue; Returned when the
	// function's answer came back (the emulator's clock).
	Received, Returned time.Time
	// MessageIDs are the batch's records, in order.
	MessageIDs []string
	// Failed are the records the function reported failed
	// (ReportBatchItemFailures); they stay on the queue.
	Failed []string
	// Error is the function's or the runtime's error, or why its answer was
	// refused; the whole batch stays on the queue.
	Error string
	// Deleted are the records deleted from the queue.
	Deleted []string
}

// Event source mapping limits for SQS standard queues.
const (
	defaultSQSBatchSize = 10
	maxSQSBatchSize     = 10000
	maxBatchingWindow   = 300
)

type esmInput struct {
	UUID                           string   `json:"-"`
	EventSourceArn                 string   `json:"EventSourceArn"`
	FunctionName                   string   `json:"FunctionName"`
	BatchSize                      *int     `json:"BatchSize"`
	MaximumBatchingWindowInSeconds *int     `json:"MaximumBatchingWindowInSeconds"`
	Enabled                        *bool    `json:"Enabled"`
	FunctionResponseTypes          []string `json:"FunctionResponseTypes"`
}

// esmConfiguration is Lambda's EventSourceMappingConfiguration.
type esmConfiguration struct {
	UUID                           string   `json:"UUID"`
	EventSourceArn                 string   `json:"EventSourceArn"`
	FunctionArn                    string   `json:"FunctionArn"`
	BatchSize                      int      `json:"BatchSize"`
	MaximumBatchingWindowInSeconds int      `json:"MaximumBatchingWindowInSeconds"`
	State                          string   `json:"State"`
	StateTransitionReason          string   `json:"StateTransitionReason"`
	LastModified                   float64  `json:"LastModified"`
	FunctionResponseTypes          []string `json:"FunctionResponseTypes,omitempty"`
}

func (e *Emulator) esmConfigurationLocked(m *mapping) esmConfiguration {
	c := esmConfiguration{UUID: m.uuid, EventSourceArn: m.sourceARN, FunctionArn: e.functionARN(m.function),
		BatchSize: m.batchSize, MaximumBatchingWindowInSeconds: m.window, State: m.state,
		StateTransitionReason: "USER_INITIATED", LastModified: float64(m.lastModified.UnixMilli()) / 1000}
	if m.reportFailures {
		c.FunctionResponseTypes = []string{"ReportBatchItemFailures"}
	}
	return c
}

// createEventSourceMapping maps an SQS queue of this emulator to a function
// and starts polling it unless Enabled is false. As on AWS, the function's
// timeout must not exceed the queue's visibility timeout, and a queue maps
// to a function once.
func (e *Emulator) createEventSourceMapping(in esmInput) (*esmConfiguration, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	fn, apiErr := e.functionLocked(in.FunctionName)
	if apiErr != nil {
		return nil, apiErr
	}
	q, ok := e.queueByARNLocked(in.EventSourceArn)
	if !ok {
		return nil, &APIError{"InvalidParameterValueException", "Error occurred while ReceiveMessage. SQS Error Code: AWS.SimpleQueueService.NonExistentQueue. SQS Error Message: The specified queue does not exist."}
	}
	if apiErr := e.executionRoleMayPollLocked(fn.role, q); apiErr != nil {
		return nil, apiErr
	}
	for _, m := range e.lambda.mappings {
		if m.sourceARN == in.EventSourceArn && m.function == fn.name {
			return nil, &APIError{"ResourceConflictException", fmt.Sprintf("An event source mapping with SQS arn (\" %s \") and function (\" %s \") already exists. Please update or delete the existing mapping with UUID %s", in.EventSourceArn, fn.name, m.uuid)}
		}
	}
	if time.Duration(fn.timeout)*time.Second > q.visibility {
		return nil, &APIError{"InvalidParameterValueException", fmt.Sprintf("Queue visibility timeout: %d seconds is less than Function timeout: %d seconds", int(q.visibility/time.Second), fn.timeout)}
	}
	m := &mapping{uuid: e.uuidLocked(), function: fn.name, sourceARN: in.EventSourceArn, batchSize: defaultSQSBatchSize,
		lastModified: e.clk.Now(), state: "Disabled"}
	if apiErr := m.apply(in); apiErr != nil {
		return nil, apiErr
	}
	e.lambda.mappings[m.uuid] = m
	cfg := e.esmConfigurationLocked(m)
	if in.Enabled == nil || *in.Enabled {
		cfg.State, m.enabled = "Creating", true
		e.startPollerLocked(m)
	}
	return &cfg, nil
}

// apply sets the mapping's batching and response types, checking them.
func (m *mapping) apply(in esmInput) *APIError {
	if in.BatchSize != nil {
		m.batchSize = *in.BatchSize
	}
	if in.MaximumBatchingWindowInSeconds != nil {
		m.window = *in.MaximumBatchingWindowInSeconds
	}
	if in.FunctionResponseTypes != nil {
		m.reportFailures = false
		for _, t := range in.FunctionResponseTypes {
			if t != "ReportBatchItemFailures" {
				return &APIError{"ValidationException", "1 validation error detected: Value '" + t + "' at 'functionResponseTypes' failed to satisfy constraint: Member must satisfy enum value set: [ReportBatchItemFailures]"}
			}
			m.reportFailures = true
		}
	}
	switch {
	case m.batchSize < 1 || m.batchSize > maxSQSBatchSize:
		return &APIError{"InvalidParameterValueException", "BatchSize must be between 1 and 10000 for an SQS event source."}
	case m.window < 0 || m.window > maxBatchingWindow:
		return &APIError{"InvalidParameterValueException", "MaximumBatchingWindowInSeconds must be between 0 and 300."}
	case m.batchSize > 10 && m.window == 0:
		return &APIError{"InvalidParameterValueException", "Maximum batch window in seconds must be greater than 0 if maximum batch size is greater than 10"}
	}
	return nil
}

func (e *Emulator) uuidLocked() string {
	r := e.rnd
	return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", r.Uint32(), r.Intn(1<<16), r.Intn(1<<12), 0x8000|r.Intn(1<<14), r.Int63()&0xffffffffffff)
}

func (e *Emulator) mappingLocked(uuid string) (*mapping, *APIError) {
	m, ok := e.lambda.mappings[uuid]
	if !ok {
		return nil, &APIError{"ResourceNotFoundException", "The resource you requested does not exist. (Service: Lambda, Status Code: 404, Request ID: req-emulated)"}
	}
	return m, nil
}

func (e *Emulator) getEventSourceMapping(uuid string) (*esmConfiguration, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	m, apiErr := e.mappingLocked(uuid)
	if apiErr != nil {
		return nil, apiErr
	}
	cfg := e.esmConfigurationLocked(m)
	return &cfg, nil
}

// updateEventSourceMapping changes batching and response types, and
// enables or disables the mapping.
func (e *Emulator) updateEventSourceMapping(in esmInput) (*esmConfiguration, *APIError) {
	e.mu.Lock()
	m, apiErr := e.mappingLocked(in.UUID)
	if apiErr == nil {
		next := mapping{batchSize: m.batchSize, window: m.window, reportFailures: m.reportFailures}
		if apiErr = next.apply(in); apiErr == nil {
			m.batchSize, m.window, m.reportFailures, m.lastModified = next.batchSize, next.window, next.reportFailures, e.clk.Now()
		}
	}
	if apiErr != nil {
		e.mu.Unlock()
		return nil, apiErr
	}
	var stopping *mapping
	if in.Enabled != nil {
		m.enabled = *in.Enabled
	}
	switch {
	case m.enabled && m.poller == nil:
		e.startPollerLocked(m)
	case !m.enabled && m.poller != nil && m.state != "Disabling":
		m.state, stopping = "Disabling", m
	}
	cfg := e.esmConfigurationLocked(m)
	e.mu.Unlock()
	if stopping != nil {
		go e.stopPoller(stopping, "Disabled", false)
	}
	return &cfg, nil
}

// deleteEventSourceMapping stops the poller and forgets the mapping.
func (e *Emulator) deleteEventSourceMapping(uuid string) (*esmConfiguration, *APIError) {
	e.mu.Lock()
	m, apiErr := e.mappingLocked(uuid)
	if apiErr != nil {
		e.mu.Unlock()
		return nil, apiErr
	}
	m.state, m.enabled = "Deleting", false
	cfg := e.esmConfigurationLocked(m)
	e.mu.Unlock()
	go e.stopPoller(m, "Deleting", true)
	return &cfg, nil
}

// stopPoller stops m's poller (if any), then sets its state or forgets it.
func (e *Emulator) stopPoller(m *mapping, state string, forget bool) {
	e.mu.Lock()
	p := m.poller
	e.mu.Unlock()
	if p != nil {
		p.halt()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if m.poller == p {
		m.poller = nil
	}
	m.state = state
	switch {
	case forget:
		delete(e.lambda.mappings, m.uuid)
	case m.enabled && m.poller == nil: // enabled again while it was stopping
		e.startPollerLocked(m)
	}
}

type listESMInput struct {
	FunctionName, EventSourceArn string
}

func (e *Emulator) listEventSourceMappings(in listESMInput) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := []esmConfiguration{}
	fnName := in.FunctionName
	if i := strings.LastIndex(fnName, ":function:"); i >= 0 {
		fnName = fnName[i+len(":function:"):]
	}
	for _, uuid := range sortedKeys(e.lambda.mappings) {
		m := e.lambda.mappings[uuid]
		if (fnName == "" || m.function == fnName) && (in.EventSourceArn == "" || m.sourceARN == in.EventSourceArn) {
			out = append(out, e.esmConfigurationLocked(m))
		}
	}
	return map[string]any{"EventSourceMappings": out}, nil
}

// Invocations returns the batches the event source mapping has handed its
// function so far, oldest first.
func (e *Emulator) Invocations(uuid string) []Invocation {
	e.mu.Lock()
	defer e.mu.Unlock()
	m, ok := e.lambda.mappings[uuid]
	if !ok {
		return nil
	}
	return slices.Clone(m.invocations)
}
