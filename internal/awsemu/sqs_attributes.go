package awsemu

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// SQS's defaults for the attributes a queue was created without.
var sqsDefaultAttributes = map[string]string{
	"DelaySeconds": "0", "MaximumMessageSize": "262144", "MessageRetentionPeriod": "345600",
	"ReceiveMessageWaitTimeSeconds": "0", "VisibilityTimeout": "30", "SqsManagedSseEnabled": "true",
}

// sqsIntRanges bound the numeric attributes, as SQS's API reference does.
var sqsIntRanges = map[string][2]int{
	"DelaySeconds": {0, 900}, "MaximumMessageSize": {1024, 1048576}, "MessageRetentionPeriod": {60, 1209600},
	"ReceiveMessageWaitTimeSeconds": {0, 20}, "VisibilityTimeout": {0, 43200}, "KmsDataKeyReusePeriodSeconds": {60, 86400},
}

// sqsOtherAttributes are the other attributes a queue can be given.
var sqsOtherAttributes = map[string]bool{"Policy": true, "RedrivePolicy": true, "RedriveAllowPolicy": true, "KmsMasterKeyId": true,
	"SqsManagedSseEnabled": true, "FifoQueue": true, "ContentBasedDeduplication": true, "DeduplicationScope": true, "FifoThroughputLimit": true}

var queueNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)

// sqsHandlers answer the SQS actions of queue attributes and tags, one line each.
var sqsHandlers = map[string]func(e *Emulator, w http.ResponseWriter, req request){
	"SetQueueAttributes": func(e *Emulator, w http.ResponseWriter, req request) { jsonCall(w, req, e.sqsSetQueueAttributes) },
	"TagQueue":           func(e *Emulator, w http.ResponseWriter, req request) { jsonCall(w, req, e.sqsTagQueue) },
	"UntagQueue":         func(e *Emulator, w http.ResponseWriter, req request) { jsonCall(w, req, e.sqsUntagQueue) },
	"ListQueueTags":      func(e *Emulator, w http.ResponseWriter, req request) { jsonCall(w, req, e.sqsListQueueTags) },
	"ListQueues":         func(e *Emulator, w http.ResponseWriter, req request) { jsonCall(w, req, e.sqsListQueues) },
}

// redrivePolicy is a RedrivePolicy attribute's JSON.
type redrivePolicy struct {
	Target string          `json:"deadLetterTargetArn"`
	Max    json.RawMessage `json:"maxReceiveCount"`
}

func (r redrivePolicy) maxReceives() int {
	n, err := strconv.Atoi(strings.Trim(string(r.Max), `"`))
	if err != nil {
		return 0
	}
	return n
}

// validateQueueAttributesLocked checks attributes as SQS does, naming the
// attribute that is wrong.
func (e *Emulator) validateQueueAttributesLocked(attrs map[string]string) *APIError {
	for k, v := range attrs {
		bad := &APIError{"InvalidAttributeValue", "Invalid value for the parameter " + k + "."}
		if r, ok := sqsIntRanges[k]; ok {
			if n, err := strconv.Atoi(v); err != nil || n < r[0] || n > r[1] {
				return &APIError{"InvalidAttributeValue", "Invalid value for the parameter " + k + ": must be an integer from " +
					strconv.Itoa(r[0]) + " to " + strconv.Itoa(r[1]) + "."}
			}
			continue
		}
		if !sqsOtherAttributes[k] {
			return &APIError{"InvalidAttributeName", "Unknown Attribute " + k + "."}
		}
		switch k {
		case "Policy":
			if _, err := parsePolicy(v, resourcePolicy); v != "" && err != nil {
				return &APIError{"InvalidAttributeValue", "Invalid value for the parameter Policy. Reason: " + err.Error()}
			}
		case "RedrivePolicy":
			if apiErr := e.validateRedriveLocked(v); apiErr != nil {
				return apiErr
			}
		case "SqsManagedSseEnabled", "FifoQueue", "ContentBasedDeduplication":
			if v != "true" && v != "false" {
				return bad
			}
		}
	}
	if attrs["KmsMasterKeyId"] != "" && attrs["SqsManagedSseEnabled"] == "true" {
		return &APIError{"InvalidAttributeName", "You can use one type of server-side encryption (SSE) at one time: KmsMasterKeyId or SqsManagedSseEnabled."}
	}
	return nil
}

func (e *Emulator) validateRedriveLocked(v string) *APIError {
	if v == "" {
		return nil
	}
	var rp redrivePolicy
	dec := json.NewDecoder(strings.NewReader(v))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rp); err != nil || rp.Target == "" {
		return &APIError{"InvalidAttributeValue", "Value " + v + " for parameter RedrivePolicy is invalid. Reason: Redrive policy is not a valid JSON map of deadLetterTargetArn and maxReceiveCount."}
	}
	if n := rp.maxReceives(); n < 1 || n > 1000 {
		return &APIError{"InvalidAttributeValue", "Value " + v + " for parameter RedrivePolicy is invalid. Reason: Invalid value for maxReceiveCount: must be from 1 to 1000."}
	}
	if _, ok := e.queueWithARNLocked(rp.Target); !ok {
		return &APIError{"InvalidAttributeValue", "Value " + v + " for parameter RedrivePolicy is invalid. Reason: Dead letter target does not exist."}
	}
	return nil
}

// queueWithARNLocked finds a queue of this emulator's region and account.
func (e *Emulator) queueWithARNLocked(arn string) (*queue, bool) {
	parts := strings.Split(arn, ":")
	if len(parts) != 6 || parts[2] != "sqs" || parts[3] != e.cfg.Region || parts[4] != e.cfg.AccountID {
		return nil, false
	}
	q, ok := e.sqs.byName[parts[5]]
	return q, ok
}

func (e *Emulator) queueARN(q *queue) string {
	return "arn:aws:sqs:" + e.cfg.Region + ":" + e.cfg.AccountID + ":" + q.name
}

// policyLocked is the queue's resource policy, nil without one.
func (q *queue) policyLocked() *policy {
	doc := q.attributes["Policy"]
	if doc == "" {
		return nil
	}
	p, err := parsePolicy(doc, resourcePolicy)
	if err != nil {
		return nil
	}
	return p
}

type setQueueAttributesInput struct {
	QueueURL   string            `json:"QueueUrl"`
	Attributes map[string]string `json:"Attributes"`
}

// sqsSetQueueAttributes sets attributes; an empty Policy or RedrivePolicy removes it.
func (e *Emulator) sqsSetQueueAttributes(in setQueueAttributesInput) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	q, apiErr := e.queueByURLLocked(in.QueueURL)
	if apiErr != nil {
		return nil, apiErr
	}
	merged := map[string]string{}
	for k, v := range q.attributes {
		merged[k] = v
	}
	for k, v := range in.Attributes {
		merged[k] = v
		if k == "KmsMasterKeyId" && v != "" && in.Attributes["SqsManagedSseEnabled"] == "" {
			merged["SqsManagedSseEnabled"] = "false"
		}
	}
	if apiErr := e.validateQueueAttributesLocked(merged); apiErr != nil {
		return nil, apiErr
	}
	for k, v := range in.Attributes {
		if v == "" && (k == "Policy" || k == "RedrivePolicy" || k == "KmsMasterKeyId") {
			delete(merged, k)
		}
	}
	q.attributes, q.modified = merged, e.clk.Now()
	if s, err := strconv.Atoi(merged["VisibilityTimeout"]); err == nil {
		q.visibility = time.Duration(s) * time.Second
	}
	return struct{}{}, nil
}

type getQueueAttributesInput struct {
	QueueURL       string   `json:"QueueUrl"`
	AttributeNames []string `json:"AttributeNames"`
}

// sqsGetQueueAttributes answers the attributes asked for (All for every
// one): those set, SQS's defaults for the others, and the computed ones.
func (e *Emulator) sqsGetQueueAttributes(in getQueueAttributesInput) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	q, err := e.queueByURLLocked(in.QueueURL)
	if err != nil {
		return nil, err
	}
	all := e.queueAttributesLocked(q)
	out := map[string]string{}
	for _, name := range in.AttributeNames {
		if name == "All" {
			return map[string]map[string]string{"Attributes": all}, nil
		}
		_, known := all[name]
		if !known && !sqsOtherAttributes[name] && sqsIntRanges[name] == [2]int{} {
			return nil, &APIError{"InvalidAttributeName", "Unknown Attribute " + name + "."}
		}
		if known {
			out[name] = all[name]
		}
	}
	return map[string]map[string]string{"Attributes": out}, nil
}

func (e *Emulator) queueAttributesLocked(q *queue) map[string]string {
	now := e.clk.Now()
	e.expireAndRedriveLocked(q, now)
	visible, inFlight, delayed := 0, 0, 0
	for _, m := range q.messages {
		switch {
		case now.Before(m.visibleAt) && m.receives == 0:
			delayed++
		case now.Before(m.visibleAt):
			inFlight++
		default:
			visible++
		}
	}
	all := map[string]string{}
	for k, v := range sqsDefaultAttributes {
		all[k] = v
	}
	if q.attributes["KmsMasterKeyId"] != "" {
		all["SqsManagedSseEnabled"] = "false"
	}
	for k, v := range q.attributes {
		all[k] = v
	}
	all["ApproximateNumberOfMessages"] = strconv.Itoa(visible)
	all["ApproximateNumberOfMessagesNotVisible"] = strconv.Itoa(inFlight)
	all["ApproximateNumberOfMessagesDelayed"] = strconv.Itoa(delayed)
	all["VisibilityTimeout"] = strconv.Itoa(int(q.visibility / time.Second))
	all["QueueArn"] = e.queueARN(q)
	all["CreatedTimestamp"] = strconv.FormatInt(q.created.Unix(), 10)
	all["LastModifiedTimestamp"] = strconv.FormatInt(q.modified.Unix(), 10)
	return all
}

// expireAndRedriveLocked drops messages older than the queue's retention
// period, and moves to the dead-letter queue each visible message already
// received maxReceiveCount times, as SQS does on the next receive.
func (e *Emulator) expireAndRedriveLocked(q *queue, now time.Time) {
	retention, _ := strconv.Atoi(orDefault(q.attributes["MessageRetentionPeriod"], sqsDefaultAttributes["MessageRetentionPeriod"]))
	var rp redrivePolicy
	_ = json.Unmarshal([]byte(q.attributes["RedrivePolicy"]), &rp)
	dlq, _ := e.queueWithARNLocked(rp.Target)
	kept := q.messages[:0]
	for _, m := range q.messages {
		switch {
		case now.Sub(m.sentAt) >= time.Duration(retention)*time.Second:
		case dlq != nil && dlq != q && !now.Before(m.visibleAt) && m.receives >= rp.maxReceives():
			moved := e.enqueueLocked(dlq, m.body, 0)
			moved.sentAt = m.sentAt
		default:
			kept = append(kept, m)
		}
	}
	q.messages = kept
}

type tagQueueInput struct {
	QueueURL string            `json:"QueueUrl"`
	Tags     map[string]string `json:"Tags"`
	TagKeys  []string          `json:"TagKeys"`
}

func (e *Emulator) sqsTagQueue(in tagQueueInput) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	q, apiErr := e.queueByURLLocked(in.QueueURL)
	if apiErr != nil {
		return nil, apiErr
	}
	for k, v := range in.Tags {
		q.tags[k] = v
	}
	return struct{}{}, nil
}

func (e *Emulator) sqsUntagQueue(in tagQueueInput) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	q, apiErr := e.queueByURLLocked(in.QueueURL)
	if apiErr != nil {
		return nil, apiErr
	}
	for _, k := range in.TagKeys {
		delete(q.tags, k)
	}
	return struct{}{}, nil
}

func (e *Emulator) sqsListQueueTags(in tagQueueInput) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	q, apiErr := e.queueByURLLocked(in.QueueURL)
	if apiErr != nil {
		return nil, apiErr
	}
	out := map[string]string{}
	for k, v := range q.tags {
		out[k] = v
	}
	return map[string]map[string]string{"Tags": out}, nil
}

type listQueuesInput struct {
	Prefix string `json:"QueueNamePrefix"`
}

func (e *Emulator) sqsListQueues(in listQueuesInput) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	urls := []string{}
	for _, name := range sortedKeys(e.sqs.byName) {
		if strings.HasPrefix(name, in.Prefix) {
			urls = append(urls, e.sqs.byName[name].url)
		}
	}
	return map[string][]string{"QueueUrls": urls}, nil
}

// Queues returns the names of every queue, sorted.
func (e *Emulator) Queues() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return sortedKeys(e.sqs.byName)
}

// QueueAttributes returns a queue's attributes as GetQueueAttributes All
// would; ok is false when there is no such queue.
func (e *Emulator) QueueAttributes(name string) (map[string]string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	q, ok := e.sqs.byName[name]
	if !ok {
		return nil, false
	}
	return e.queueAttributesLocked(q), true
}
