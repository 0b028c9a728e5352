package awsemu

import (
	"encoding/json"
	"net/url"
	"strings"
)

// Authorizers of the JSON and REST services whose calls name a resource:
// Lambda functions and event source mappings, CloudWatch Logs groups and
// EventBridge rules, each on its ARN as the Service Authorization Reference
// has it.

// iamActionNames are the IAM actions whose names differ from their API
// operation's.
var iamActionNames = map[string]string{"lambda:Invoke": "lambda:InvokeFunction"}

func (e *Emulator) arnOf(service, resource string) string {
	return "arn:aws:" + service + ":" + e.cfg.Region + ":" + e.cfg.AccountID + ":" + resource
}

// authzLambda authorizes on the function or event source mapping a call
// names; creating a function passes its execution role to Lambda.
func (e *Emulator) authzLambda(req request, action string) ([]authRequest, *policy) {
	var in struct {
		FunctionName string            `json:"FunctionName"`
		Role         string            `json:"Role"`
		Tags         map[string]string `json:"Tags"`
	}
	_ = json.Unmarshal(req.body, &in)
	parts := strings.Split(strings.Trim(req.http.URL.Path, "/"), "/")
	var s authSet
	switch {
	case action == "lambda:CreateFunction":
		s.add(action, e.functionARN(in.FunctionName), requestTags(in.Tags, nil))
		if len(in.Tags) > 0 { // tags at creation need lambda:TagResource too
			s.add("lambda:TagResource", e.functionARN(in.FunctionName), requestTags(in.Tags, nil))
		}
		if in.Role != "" {
			s.add("iam:PassRole", in.Role, map[string][]string{"iam:passedtoservice": {"lambda.amazonaws.com"}})
		}
	case len(parts) >= 3 && parts[1] == "functions":
		name, _ := url.PathUnescape(parts[2])
		s.add(action, e.functionARNOf(name), map[string][]string{})
	case len(parts) >= 3 && parts[1] == "event-source-mappings":
		s.add(action, e.arnOf("lambda", "event-source-mapping:"+parts[2]), map[string][]string{})
	case action == "lambda:CreateEventSourceMapping":
		s.add(action, "*", map[string][]string{"lambda:functionarn": {e.functionARNOf(in.FunctionName)}})
	default:
		s.add(action, "*", map[string][]string{})
	}
	return s.out, nil
}

// functionARNOf is a function's ARN from its name or ARN.
func (e *Emulator) functionARNOf(name string) string {
	if strings.HasPrefix(name, "arn:") {
		return name
	}
	return e.functionARN(name)
}

// authzLogs authorizes on the log group a call names (by name, or by ARN
// for the tagging calls).
func (e *Emulator) authzLogs(req request, action string) ([]authRequest, *policy) {
	var in struct {
		Name string            `json:"logGroupName"`
		ARN  string            `json:"resourceArn"`
		Tags map[string]string `json:"tags"`
	}
	_ = json.Unmarshal(req.body, &in)
	resource, ctx := "*", map[string][]string{}
	switch {
	case in.Name != "":
		resource = e.arnOf("logs", "log-group:"+in.Name)
	case in.ARN != "":
		resource = strings.TrimSuffix(in.ARN, ":*")
	}
	if action == "logs:CreateLogGroup" || action == "logs:TagResource" {
		ctx = requestTags(in.Tags, nil)
	}
	if action == "logs:CreateLogGroup" && len(in.Tags) > 0 { // tags at creation need logs:TagResource too
		return []authRequest{ar(action, resource, ctx), ar("logs:TagResource", resource, requestTags(in.Tags, nil))}, nil
	}
	return []authRequest{ar(action, resource, ctx)}, nil
}

// authzEvents authorizes a rule's calls on the rule, on the default bus.
func (e *Emulator) authzEvents(req request, action string) ([]authRequest, *policy) {
	var in struct {
		Name string `json:"Name"`
		Rule string `json:"Rule"`
		Tags []struct{ Key, Value string }
	}
	_ = json.Unmarshal(req.body, &in)
	if name := orDefault(in.Name, in.Rule); name != "" && action != "events:PutEvents" {
		if action != "events:PutRule" || len(in.Tags) == 0 {
			return []authRequest{ar(action, e.ruleARN(name), map[string][]string{})}, nil
		}
		tags := map[string]string{}
		for _, t := range in.Tags {
			tags[t.Key] = t.Value
		}
		// tags at creation need events:TagResource too
		return []authRequest{ar(action, e.ruleARN(name), requestTags(tags, nil)), ar("events:TagResource", e.ruleARN(name), requestTags(tags, nil))}, nil
	}
	return []authRequest{ar(action, "*", map[string][]string{})}, nil
}
