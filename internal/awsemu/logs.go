package awsemu

import (
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// logGroup is an emulated CloudWatch Logs log group: its retention and tags
// (no events are stored).
type logGroup struct {
	name      string
	retention int // days; 0 keeps events forever
	kmsKeyID  string
	tags      map[string]string
	created   time.Time
}

// logRetentionDays are the retention periods PutRetentionPolicy accepts.
var logRetentionDays = []int{1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}

var logGroupNamePattern = regexp.MustCompile(`^[\.\-_/#A-Za-z0-9]{1,512}$`)

// logsHandlers answer the CloudWatch Logs actions, one line each.
var logsHandlers = map[string]func(e *Emulator, w http.ResponseWriter, req request){
	"CreateLogGroup":        func(e *Emulator, w http.ResponseWriter, req request) { jsonCall(w, req, e.createLogGroup) },
	"DeleteLogGroup":        func(e *Emulator, w http.ResponseWriter, req request) { jsonCall(w, req, e.deleteLogGroup) },
	"DescribeLogGroups":     func(e *Emulator, w http.ResponseWriter, req request) { jsonCall(w, req, e.describeLogGroups) },
	"PutRetentionPolicy":    func(e *Emulator, w http.ResponseWriter, req request) { jsonCall(w, req, e.putRetentionPolicy) },
	"DeleteRetentionPolicy": func(e *Emulator, w http.ResponseWriter, req request) { jsonCall(w, req, e.deleteRetentionPolicy) },
	"TagResource":           func(e *Emulator, w http.ResponseWriter, req request) { jsonCall(w, req, e.tagLogGroup) },
	"UntagResource":         func(e *Emulator, w http.ResponseWriter, req request) { jsonCall(w, req, e.untagLogGroup) },
	"ListTagsForResource":   func(e *Emulator, w http.ResponseWriter, req request) { jsonCall(w, req, e.listLogGroupTags) },
}

func (e *Emulator) serveLogs(w http.ResponseWriter, req request) {
	h, ok := logsHandlers[req.action]
	if !ok {
		writeJSONError(w, "logs", http.StatusBadRequest, "InvalidOperationException", "unknown CloudWatch Logs action "+req.action)
		return
	}
	h(e, w, req)
}

func (e *Emulator) logGroupARN(name string) string {
	return "arn:aws:logs:" + e.cfg.Region + ":" + e.cfg.AccountID + ":log-group:" + name
}

type logGroupInput struct {
	Name      string            `json:"logGroupName"`
	KMSKeyID  string            `json:"kmsKeyId"`
	Tags      map[string]string `json:"tags"`
	Retention int               `json:"retentionInDays"`
}

func (e *Emulator) logGroupLocked(name string) (*logGroup, *APIError) {
	if g, ok := e.logGroups[name]; ok {
		return g, nil
	}
	return nil, &APIError{"ResourceNotFoundException", "The specified log group does not exist."}
}

func (e *Emulator) createLogGroup(in logGroupInput) (any, *APIError) {
	if !logGroupNamePattern.MatchString(in.Name) {
		return nil, &APIError{"InvalidParameterException", "1 validation error detected: Value '" + in.Name +
			"' at 'logGroupName' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\.\\-_/#A-Za-z0-9]+"}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.logGroups[in.Name]; ok {
		return nil, &APIError{"ResourceAlreadyExistsException", "The specified log group already exists"}
	}
	g := &logGroup{name: in.Name, kmsKeyID: in.KMSKeyID, tags: map[string]string{}, created: e.clk.Now()}
	if e.logGroups == nil {
		e.logGroups = map[string]*logGroup{}
	}
	for k, v := range in.Tags {
		g.tags[k] = v
	}
	e.logGroups[in.Name] = g
	return struct{}{}, nil
}

func (e *Emulator) deleteLogGroup(in logGroupInput) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, apiErr := e.logGroupLocked(in.Name); apiErr != nil {
		return nil, apiErr
	}
	delete(e.logGroups, in.Name)
	return struct{}{}, nil
}

type describeLogGroupsInput struct {
	Prefix string `json:"logGroupNamePrefix"`
}

func (e *Emulator) describeLogGroups(in describeLogGroupsInput) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := []map[string]any{}
	for _, name := range sortedKeys(e.logGroups) {
		if !strings.HasPrefix(name, in.Prefix) {
			continue
		}
		g := e.logGroups[name]
		desc := map[string]any{"logGroupName": g.name, "arn": e.logGroupARN(g.name) + ":*", "logGroupArn": e.logGroupARN(g.name),
			"creationTime": g.created.UnixMilli(), "storedBytes": 0, "metricFilterCount": 0, "logGroupClass": "STANDARD"}
		if g.retention > 0 {
			desc["retentionInDays"] = g.retention
		}
		if g.kmsKeyID != "" {
			desc["kmsKeyId"] = g.kmsKeyID
		}
		out = append(out, desc)
	}
	return map[string]any{"logGroups": out}, nil
}

func (e *Emulator) putRetentionPolicy(in logGroupInput) (any, *APIError) {
	if !slices.Contains(logRetentionDays, in.Retention) {
		return nil, &APIError{"InvalidParameterException", "1 validation error detected: Value '" + strconv.Itoa(in.Retention) +
			"' at 'retentionInDays' failed to satisfy constraint: Member must satisfy enum value set: " + retentionList()}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	g, apiErr := e.logGroupLocked(in.Name)
	if apiErr != nil {
		return nil, apiErr
	}
	g.retention = in.Retention
	return struct{}{}, nil
}

func retentionList() string {
	out := make([]string, len(logRetentionDays))
	for i, d := range logRetentionDays {
		out[i] = strconv.Itoa(d)
	}
	return "[" + strings.Join(out, ", ") + "]"
}

func (e *Emulator) deleteRetentionPolicy(in logGroupInput) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	g, apiErr := e.logGroupLocked(in.Name)
	if apiErr != nil {
		return nil, apiErr
	}
	g.retention = 0
	return struct{}{}, nil
}

type logTagsInput struct {
	ARN     string            `json:"resourceArn"`
	Tags    map[string]string `json:"tags"`
	TagKeys []string          `json:"tagKeys"`
}

// groupOfARNLocked finds the log group a tagging call names by ARN.
func (e *Emulator) groupOfARNLocked(arn string) (*logGroup, *APIError) {
	name, ok := strings.CutPrefix(strings.TrimSuffix(arn, ":*"), e.logGroupARN(""))
	if !ok {
		return nil, &APIError{"ResourceNotFoundException", "The specified resource does not exist."}
	}
	return e.logGroupLocked(name)
}

func (e *Emulator) tagLogGroup(in logTagsInput) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	g, apiErr := e.groupOfARNLocked(in.ARN)
	if apiErr != nil {
		return nil, apiErr
	}
	for k, v := range in.Tags {
		g.tags[k] = v
	}
	return struct{}{}, nil
}

func (e *Emulator) untagLogGroup(in logTagsInput) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	g, apiErr := e.groupOfARNLocked(in.ARN)
	if apiErr != nil {
		return nil, apiErr
	}
	for _, k := range in.TagKeys {
		delete(g.tags, k)
	}
	return struct{}{}, nil
}

func (e *Emulator) listLogGroupTags(in logTagsInput) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	g, apiErr := e.groupOfARNLocked(in.ARN)
	if apiErr != nil {
		return nil, apiErr
	}
	out := map[string]string{}
	for k, v := range g.tags {
		out[k] = v
	}
	return map[string]map[string]string{"tags": out}, nil
}

// LogGroups returns the names of every log group, sorted.
func (e *Emulator) LogGroups() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return sortedKeys(e.logGroups)
}
