package provider

import (
	"encoding/json"
	"fmt"
	"strings"
)

// interruptionRule is one EventBridge rule of the interruption queue: the
// events of one kind of docs/guides/interruption.md (two kinds share the
// state-change rule, which the Lambda tells apart by state).
type interruptionRule struct {
	// Name is the rule's name after the queue's prefix.
	Name   string
	Source string
	// DetailTypes are the detail-types of the kind; AWS sends some kinds
	// under more than one spelling.
	DetailTypes []string
	// Detail narrows the event's detail, as an EventBridge pattern does.
	Detail map[string][]string
}

// interruptionRules are the rules that feed the queue, one per kind of
// event the Lambda parses.
var interruptionRules = []interruptionRule{
	{Name: "spot-interruption", Source: "aws.ec2", DetailTypes: []string{"EC2 Spot Instance Interruption Warning"}},
	{Name: "rebalance-recommendation", Source: "aws.ec2", DetailTypes: []string{"EC2 Instance Rebalance Recommendation"}},
	{Name: "scheduled-change", Source: "aws.health", DetailTypes: []string{"AWS Health Event"},
		Detail: map[string][]string{"service": {"EC2"}, "eventTypeCategory": {"scheduledChange"}}},
	{Name: "state-change", Source: "aws.ec2", DetailTypes: []string{"EC2 Instance State-change Notification"},
		Detail: map[string][]string{"state": {"stopping", "stopped", "shutting-down", "terminated"}}},
	{Name: "capacity-reservation-interruption", Source: "aws.ec2", DetailTypes: []string{"EC2 Capacity Reservation Instance Interruption Warning",
		"EC2 Interruptible Capacity Reservation Instance Interruption Warning"}},
	{Name: "capacity-block-expiration", Source: "aws.ec2", DetailTypes: []string{"Capacity Block Reservation Expiration Warning",
		"Capacity Block Expiration Warning"}},
}

// pattern is the rule's event pattern, compact JSON.
func (r interruptionRule) pattern() string {
	p := map[string]any{"source": []string{r.Source}, "detail-type": r.DetailTypes}
	if len(r.Detail) > 0 {
		p["detail"] = r.Detail
	}
	return compactJSON(p)
}

// ruleName is the rule's full name; EventBridge allows 64 characters.
func ruleName(prefix string, r interruptionRule) string { return prefix + "-" + r.Name }

// maxRulePrefix is the longest prefix every rule's name fits with.
func maxRulePrefix() int {
	longest := 0
	for _, r := range interruptionRules {
		longest = max(longest, len(r.Name))
	}
	return 64 - 1 - longest
}

// queuePolicy lets only EventBridge, and only these rules, send to the queue,
// and denies every access without TLS.
func queuePolicy(queueARN string, ruleARNs []string) string {
	return compactJSON(map[string]any{"Version": "2012-10-17", "Statement": []any{
		map[string]any{"Sid": "EventBridgeRulesSend", "Effect": "Allow", "Principal": map[string]any{"Service": "events.amazonaws.com"},
			"Action": "sqs:SendMessage", "Resource": queueARN, "Condition": map[string]any{"ArnEquals": map[string]any{"aws:SourceArn": ruleARNs}}},
		map[string]any{"Sid": "OnlyAWSServicesSend", "Effect": "Deny", "Principal": "*", "Action": "sqs:SendMessage", "Resource": queueARN,
			"Condition": map[string]any{"Bool": map[string]any{"aws:PrincipalIsAWSService": "false"}}},
		denyPlainHTTP(queueARN),
	}})
}

// dlqPolicy denies every access to the dead-letter queue without TLS.
func dlqPolicy(dlqARN string) string {
	return compactJSON(map[string]any{"Version": "2012-10-17", "Statement": []any{denyPlainHTTP(dlqARN)}})
}

func denyPlainHTTP(arn string) map[string]any {
	return map[string]any{"Sid": "DenyPlainHTTP", "Effect": "Deny", "Principal": "*", "Action": "sqs:*", "Resource": arn,
		"Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}}}
}

// redrivePolicy sends a message to the dead-letter queue after max receives.
func redrivePolicy(dlqARN string, max int64) string {
	return fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":%d}`, dlqARN, max)
}

// redriveMax reads maxReceiveCount back, 0 when there is no redrive.
func redriveMax(doc string) (string, int64) {
	var rp struct {
		Target string          `json:"deadLetterTargetArn"`
		Max    json.RawMessage `json:"maxReceiveCount"`
	}
	if json.Unmarshal([]byte(doc), &rp) != nil {
		return "", 0
	}
	var n int64
	fmt.Sscan(strings.Trim(string(rp.Max), `"`), &n)
	return rp.Target, n
}

// ruleARN is a rule's ARN on the default bus, from the queue's region and account.
func ruleARN(queueARN, name string) string {
	parts := strings.Split(queueARN, ":")
	if len(parts) != 6 {
		return ""
	}
	return "arn:" + parts[1] + ":events:" + parts[3] + ":" + parts[4] + ":rule/" + name
}
