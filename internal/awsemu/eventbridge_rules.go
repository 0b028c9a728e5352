package awsemu

import (
	"encoding/json"
	"slices"
	"strings"
)

// busState holds the default event bus's rules.
type busState struct {
	rules map[string]*rule // name -> rule
}

func newBusState() busState { return busState{rules: map[string]*rule{}} }

// rule is an EventBridge rule: the events its pattern matches go to its
// targets. Only SQS queues of this emulator are delivered to.
type rule struct {
	name, description, state, patternDoc string
	pattern                              *eventPattern
	targets                              map[string]string // target id -> ARN
}

type putRuleInput struct {
	Name               string `json:"Name"`
	EventPattern       string `json:"EventPattern"`
	ScheduleExpression string `json:"ScheduleExpression"`
	State              string `json:"State"`
	Description        string `json:"Description"`
}

func (e *Emulator) ruleARN(name string) string {
	return "arn:aws:events:" + e.cfg.Region + ":" + e.cfg.AccountID + ":rule/" + name
}

// putRule creates or updates a rule; a pattern EventBridge would refuse is
// InvalidEventPatternException, and schedules are not emulated.
func (e *Emulator) putRule(in putRuleInput) (any, *APIError) {
	if in.Name == "" {
		return nil, &APIError{"ValidationException", "1 validation error detected: Value null at 'name' failed to satisfy constraint: Member must not be null"}
	}
	if in.EventPattern == "" {
		return nil, &APIError{"ValidationException", "Parameter(s) EventPattern must be specified (schedule expressions are not emulated)."}
	}
	p, err := parseEventPattern(in.EventPattern)
	if err != nil {
		return nil, &APIError{"InvalidEventPatternException", "Event pattern is not valid. Reason: " + err.Error()}
	}
	state := orDefault(in.State, "ENABLED")
	if state != "ENABLED" && state != "DISABLED" {
		return nil, &APIError{"ValidationException", "State must be ENABLED or DISABLED."}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.bus.rules[in.Name]
	if !ok {
		r = &rule{name: in.Name, targets: map[string]string{}}
		e.bus.rules[in.Name] = r
	}
	r.description, r.state, r.patternDoc, r.pattern = in.Description, state, in.EventPattern, p
	return map[string]string{"RuleArn": e.ruleARN(in.Name)}, nil
}

type ruleNameInput struct {
	Name  string `json:"Name"`
	Rule  string `json:"Rule"`
	Force bool   `json:"Force"`
}

func (e *Emulator) ruleLocked(name string) (*rule, *APIError) {
	r, ok := e.bus.rules[name]
	if !ok {
		return nil, &APIError{"ResourceNotFoundException", "Rule " + name + " does not exist on EventBus default."}
	}
	return r, nil
}

func (e *Emulator) describeRule(in ruleNameInput) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, err := e.ruleLocked(in.Name)
	if err != nil {
		return nil, err
	}
	return map[string]string{"Name": r.name, "Arn": e.ruleARN(r.name), "EventPattern": r.patternDoc, "State": r.state,
		"Description": r.description, "EventBusName": "default"}, nil
}

// deleteRule deletes a rule; one that still has targets is refused, as on AWS.
func (e *Emulator) deleteRule(in ruleNameInput) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.bus.rules[in.Name]
	if !ok {
		return struct{}{}, nil
	}
	if len(r.targets) > 0 && !in.Force {
		return nil, &APIError{"ValidationException", "Rule can't be deleted since it has targets."}
	}
	delete(e.bus.rules, in.Name)
	return struct{}{}, nil
}

type target struct {
	ID  string `json:"Id"`
	Arn string `json:"Arn"`
}

type putTargetsInput struct {
	Rule    string   `json:"Rule"`
	Targets []target `json:"Targets"`
}

func (e *Emulator) putTargets(in putTargetsInput) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, err := e.ruleLocked(in.Rule)
	if err != nil {
		return nil, err
	}
	for _, t := range in.Targets {
		r.targets[t.ID] = t.Arn
	}
	return map[string]any{"FailedEntryCount": 0, "FailedEntries": []any{}}, nil
}

type removeTargetsInput struct {
	Rule string   `json:"Rule"`
	Ids  []string `json:"Ids"`
}

func (e *Emulator) removeTargets(in removeTargetsInput) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, err := e.ruleLocked(in.Rule)
	if err != nil {
		return nil, err
	}
	for _, id := range in.Ids {
		delete(r.targets, id)
	}
	return map[string]any{"FailedEntryCount": 0, "FailedEntries": []any{}}, nil
}

func (e *Emulator) listTargetsByRule(in ruleNameInput) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, err := e.ruleLocked(in.Rule)
	if err != nil {
		return nil, err
	}
	out := []target{}
	for _, id := range sortedKeys(r.targets) {
		out = append(out, target{ID: id, Arn: r.targets[id]})
	}
	return map[string][]target{"Targets": out}, nil
}

// deliverToRulesLocked sends the event, as JSON, to the SQS queue targets
// of every enabled rule that matches it, rules and targets in name order.
func (e *Emulator) deliverToRulesLocked(ev Event, body []byte) {
	if len(e.bus.rules) == 0 {
		return
	}
	var decoded map[string]any
	if err := json.Unmarshal(body, &decoded); err != nil {
		return
	}
	for _, name := range sortedKeys(e.bus.rules) {
		r := e.bus.rules[name]
		if r.state != "ENABLED" || !r.pattern.matches(decoded) {
			continue
		}
		for _, id := range sortedKeys(r.targets) {
			if q, ok := e.queueByARNLocked(r.targets[id]); ok && e.eventBridgeMaySendLocked(q, e.ruleARN(r.name)) {
				e.enqueueLocked(q, string(body), 0)
			}
		}
	}
}

// queueByARNLocked finds a queue of this emulator's region and account.
func (e *Emulator) queueByARNLocked(arn string) (*queue, bool) {
	parts := strings.Split(arn, ":")
	if len(parts) != 6 || parts[2] != "sqs" || parts[3] != e.cfg.Region || parts[4] != e.cfg.AccountID {
		return nil, false
	}
	q, ok := e.sqs.byName[parts[5]]
	return q, ok
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
