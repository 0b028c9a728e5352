package awsemu

import (
	"strconv"
	"strings"
	"time"
)

type sqsQueueInput struct {
	QueueName  string            `json:"QueueName"`
	QueueURL   string            `json:"QueueUrl"`
	Attributes map[string]string `json:"Attributes"`
	Tags       map[string]string `json:"tags"`
}

func (e *Emulator) sqsCreateQueue(in sqsQueueInput) (any, *APIError) {
	if in.QueueName == "" {
		return nil, &APIError{"MissingParameter", "The request must contain the parameter QueueName."}
	}
	if !queueNamePattern.MatchString(strings.TrimSuffix(in.QueueName, ".fifo")) {
		return nil, &APIError{"InvalidParameterValue", "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length"}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if apiErr := e.validateQueueAttributesLocked(in.Attributes); apiErr != nil {
		return nil, apiErr
	}
	if q, ok := e.sqs.byName[in.QueueName]; ok {
		for k, v := range in.Attributes {
			if q.attributes[k] != v {
				return nil, &APIError{"QueueNameExists", "A queue already exists with the same name and a different value for attribute " + k}
			}
		}
	}
	q, existed := e.sqs.byName[in.QueueName]
	if !existed {
		q = e.createQueueLocked(in.QueueName, in.Attributes)
		for k, v := range in.Tags {
			q.tags[k] = v
		}
	}
	return map[string]string{"QueueUrl": q.url}, nil
}

func (e *Emulator) sqsGetQueueURL(in sqsQueueInput) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	q, ok := e.sqs.byName[in.QueueName]
	if !ok {
		return nil, &APIError{"QueueDoesNotExist", "The specified queue does not exist."}
	}
	return map[string]string{"QueueUrl": q.url}, nil
}

type sendMessageInput struct {
	QueueURL     string `json:"QueueUrl"`
	MessageBody  string `json:"MessageBody"`
	DelaySeconds int    `json:"DelaySeconds"`
}

func (e *Emulator) sqsSendMessage(in sendMessageInput) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	q, err := e.queueByURLLocked(in.QueueURL)
	if err != nil {
		return nil, err
	}
	if in.MessageBody == "" {
		return nil, &APIError{"MissingParameter", "The request must contain the parameter MessageBody."}
	}
	m := e.enqueueLocked(q, in.MessageBody, time.Duration(in.DelaySeconds)*time.Second)
	return map[string]string{"MessageId": m.id, "MD5OfMessageBody": m.md5}, nil
}

type receiveMessageInput struct {
	QueueURL            string   `json:"QueueUrl"`
	MaxNumberOfMessages int      `json:"MaxNumberOfMessages"`
	VisibilityTimeout   *int     `json:"VisibilityTimeout"`
	WaitTimeSeconds     int      `json:"WaitTimeSeconds"`
	AttributeNames      []string `json:"AttributeNames"`
	SystemAttributes    []string `json:"MessageSystemAttributeNames"`
}

type sqsMessage struct {
	MessageID     string            `json:"MessageId"`
	ReceiptHandle string            `json:"ReceiptHandle"`
	MD5OfBody     string            `json:"MD5OfBody"`
	Body          string            `json:"Body"`
	Attributes    map[string]string `json:"Attributes,omitempty"`
}

// sqsReceiveMessage long-polls up to WaitTimeSeconds on the emulator's clock.
func (e *Emulator) sqsReceiveMessage(in receiveMessageInput) (any, *APIError) {
	if in.MaxNumberOfMessages == 0 {
		in.MaxNumberOfMessages = 1
	}
	if in.MaxNumberOfMessages < 1 || in.MaxNumberOfMessages > 10 {
		return nil, &APIError{"InvalidParameterValue", "Value for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10."}
	}
	deadline := e.clk.After(time.Duration(in.WaitTimeSeconds) * time.Second)
	for {
		msgs, arrived, err := e.receiveOnce(in)
		if err != nil || len(msgs) > 0 || in.WaitTimeSeconds == 0 {
			return map[string][]sqsMessage{"Messages": msgs}, err
		}
		select {
		case <-arrived:
		case <-deadline:
			return map[string][]sqsMessage{"Messages": nil}, nil
		}
	}
}

func (e *Emulator) receiveOnce(in receiveMessageInput) ([]sqsMessage, <-chan struct{}, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	q, err := e.queueByURLLocked(in.QueueURL)
	if err != nil {
		return nil, nil, err
	}
	now := e.clk.Now()
	e.expireAndRedriveLocked(q, now)
	vis := q.visibility
	if in.VisibilityTimeout != nil {
		vis = time.Duration(*in.VisibilityTimeout) * time.Second
	}
	withAttrs := len(in.AttributeNames)+len(in.SystemAttributes) > 0
	var out []sqsMessage
	for _, m := range q.messages {
		if len(out) == in.MaxNumberOfMessages {
			break
		}
		if now.Before(m.visibleAt) {
			continue
		}
		m.receives++
		m.visibleAt = now.Add(vis)
		m.receipt = e.newID("rh") + "-" + m.id
		sm := sqsMessage{MessageID: m.id, ReceiptHandle: m.receipt, MD5OfBody: m.md5, Body: m.body}
		if withAttrs {
			sm.Attributes = map[string]string{"ApproximateReceiveCount": strconv.Itoa(m.receives),
				"SentTimestamp": strconv.FormatInt(m.sentAt.UnixMilli(), 10)}
		}
		out = append(out, sm)
	}
	return out, q.arrived, nil
}

type deleteMessageInput struct {
	QueueURL      string `json:"QueueUrl"`
	ReceiptHandle string `json:"ReceiptHandle"`
}

func (e *Emulator) sqsDeleteMessage(in deleteMessageInput) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	q, err := e.queueByURLLocked(in.QueueURL)
	if err != nil {
		return nil, err
	}
	for i, m := range q.messages {
		if m.receipt != "" && m.receipt == in.ReceiptHandle {
			q.messages = append(q.messages[:i], q.messages[i+1:]...)
			return struct{}{}, nil
		}
	}
	return nil, &APIError{"ReceiptHandleIsInvalid", "The input receipt handle \"" + in.ReceiptHandle + "\" is not a valid receipt handle."}
}

func (e *Emulator) sqsPurgeQueue(in sqsQueueInput) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	q, err := e.queueByURLLocked(in.QueueURL)
	if err != nil {
		return nil, err
	}
	q.messages = nil
	return struct{}{}, nil
}

func (e *Emulator) sqsDeleteQueue(in sqsQueueInput) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	q, err := e.queueByURLLocked(in.QueueURL)
	if err != nil {
		return nil, err
	}
	delete(e.sqs.byName, q.name)
	return struct{}{}, nil
}
