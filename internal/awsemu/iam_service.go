package awsemu

import (
	"strconv"
	"strings"
)

// Authorizations AWS's services make for themselves, outside any request a
// client signs: EventBridge sending to a rule's queue target, and Lambda's
// pollers reading a queue as the function's execution role.

// serviceContextLocked is the request context of a call a service makes.
func (e *Emulator) serviceContextLocked(extra map[string][]string) map[string][]string {
	now := e.clk.Now()
	ctx := map[string][]string{"aws:securetransport": {"true"}, "aws:requestedregion": {e.cfg.Region},
		"aws:currenttime": {now.UTC().Format("2006-01-02T15:04:05Z")}, "aws:epochtime": {strconv.FormatInt(now.Unix(), 10)}}
	for k, v := range extra {
		ctx[k] = v
	}
	return ctx
}

// eventBridgeMaySendLocked reports whether a queue's policy lets EventBridge
// send it a rule's events: as on AWS, a queue grants events.amazonaws.com
// sqs:SendMessage in its resource policy, usually for the rule's ARN
// (aws:SourceArn); without such a grant the delivery fails.
func (e *Emulator) eventBridgeMaySendLocked(q *queue, ruleARN string) bool {
	p := q.policyLocked()
	if p == nil {
		return false
	}
	ctx := e.serviceContextLocked(map[string][]string{"aws:sourcearn": {ruleARN}, "aws:sourceaccount": {e.cfg.AccountID},
		"aws:principalisawsservice": {"true"}, "aws:principalservicename": {"events.amazonaws.com"}})
	r := authRequest{action: "sqs:SendMessage", resource: e.queueARN(q), context: ctx}
	return p.decide(r, &subject{account: e.cfg.AccountID, services: []string{"events.amazonaws.com"}}) == allowed
}

// roleMayLocked reports whether a role (by ARN) may do every action on a
// queue, by its own policies and the queue's, as Lambda checks a function's
// execution role before it polls the queue for it.
func (e *Emulator) roleMayLocked(roleARN string, q *queue, actions ...string) (string, bool) {
	r := e.roleByARNLocked(roleARN)
	if r == nil {
		return actions[0], false
	}
	identity := e.identityPoliciesLocked(r)
	who := &subject{account: e.cfg.AccountID, arns: []string{roleARN}}
	for _, a := range actions {
		ctx := e.serviceContextLocked(map[string][]string{"aws:principalarn": {roleARN}, "aws:principalaccount": {e.cfg.AccountID},
			"aws:principaltype": {"AssumedRole"}, "aws:principalisawsservice": {"false"}})
		if decideAll(authRequest{action: a, resource: e.queueARN(q), context: ctx}, who, identity, q.policyLocked()) != allowed {
			return a, false
		}
	}
	return "", true
}

// executionRoleMayPollLocked answers CreateEventSourceMapping's check of the
// function's role: what Lambda says when it may not read the queue.
func (e *Emulator) executionRoleMayPollLocked(roleARN string, q *queue) *APIError {
	if missing, ok := e.roleMayLocked(roleARN, q, "sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"); !ok {
		return &APIError{"InvalidParameterValueException", "The provided execution role does not have permissions to call " +
			strings.TrimPrefix(missing, "sqs:") + " on SQS"}
	}
	return nil
}

// identityPoliciesLocked are a role's inline and attached policies.
func (e *Emulator) identityPoliciesLocked(r *iamRole) []*policy {
	return e.policiesLocked(r.inline, r.attached)
}

// policiesLocked parses inline documents and managed policies by ARN.
func (e *Emulator) policiesLocked(inline map[string]string, attached []string) []*policy {
	var out []*policy
	add := func(doc string) {
		if p := e.identityPolicyLocked(doc); p != nil {
			out = append(out, p)
		}
	}
	for _, name := range sortedKeys(inline) {
		add(inline[name])
	}
	for _, arn := range attached {
		if mp := e.managedPolicyLocked(arn); mp != nil && mp.doc != "" {
			add(mp.doc)
		}
	}
	return out
}

// identityPolicyLocked is an identity policy document parsed, once per
// document: nil for one that does not parse.
func (e *Emulator) identityPolicyLocked(doc string) *policy {
	if p, ok := e.iam.parsed[doc]; ok {
		return p
	}
	if len(e.iam.parsed) >= maxParsedPolicies {
		clear(e.iam.parsed) // documents that came and went; keep the cache bounded
	}
	p, err := parsePolicy(doc, identityPolicy)
	if err != nil {
		p = nil
	}
	e.iam.parsed[doc] = p
	return p
}

// maxParsedPolicies bounds the parsed identity policies kept.
const maxParsedPolicies = 4096

// executionRoleLocked is the execution role of a mapping's function.
func (e *Emulator) executionRoleLocked(m *mapping) string {
	if fn, ok := e.lambda.functions[m.function]; ok {
		return fn.role
	}
	return ""
}
