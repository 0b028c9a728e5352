package provider

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// converge makes AWS hold what m describes, creating what is missing and
// taking over what exists: the dead-letter queue, the queue, the rules and
// their target, then the policies that name them. It fills m's computed
// attributes as it goes.
func (r *queueResource) converge(ctx context.Context, c queueClients, m *queueModel, tags map[string]string) error {
	attrs, dlqAttrs := m.attributes()
	name := m.Name.ValueString()
	dlqURL, dlqARN, err := ensureQueue(ctx, c.sqs, name+"-dlq", dlqAttrs, tags)
	if err != nil {
		return err
	}
	m.DLQURL, m.DLQARN = types.StringValue(dlqURL), types.StringValue(dlqARN)
	attrs["RedrivePolicy"] = redrivePolicy(dlqARN, m.MaxReceiveCount.ValueInt64())
	url, arn, err := ensureQueue(ctx, c.sqs, name, attrs, tags)
	if err != nil {
		return err
	}
	m.URL, m.ARN = types.StringValue(url), types.StringValue(arn)
	if err := setAttributes(ctx, c.sqs, dlqURL, map[string]string{"Policy": dlqPolicy(dlqARN),
		"RedriveAllowPolicy": compactJSON(map[string]any{"redrivePermission": "byQueue", "sourceQueueArns": []string{arn}})}); err != nil {
		return err
	}
	rules, arns := m.expectedRules()
	for _, rule := range interruptionRules {
		if err := putRule(ctx, c.events, ruleName(m.RulePrefix.ValueString(), rule), rule, arn, tags); err != nil {
			return err
		}
	}
	m.Rules = mapValue(rules, types.MapValueMust(types.StringType, nil))
	policy := queuePolicy(arn, arns)
	if err := setAttributes(ctx, c.sqs, url, map[string]string{"Policy": policy}); err != nil {
		return err
	}
	m.PolicyJSON = types.StringValue(policy)
	return nil
}

// ensureQueue creates a queue, or takes over the one of that name: its
// attributes set and its tags added. It returns the URL and the ARN.
func ensureQueue(ctx context.Context, c *sqs.Client, name string, attrs, tags map[string]string) (string, string, error) {
	out, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs, Tags: tags})
	var url string
	switch {
	case err == nil:
		url = aws.ToString(out.QueueUrl)
	case errorCode(err) == "QueueAlreadyExists" || errorCode(err) == "QueueNameExists":
		got, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
		if err != nil {
			return "", "", fmt.Errorf("finding queue %s: %w", name, err)
		}
		url = aws.ToString(got.QueueUrl)
		if err := setAttributes(ctx, c, url, attrs); err != nil {
			return "", "", err
		}
	default:
		return "", "", fmt.Errorf("creating queue %s: %w", name, err)
	}
	if len(tags) > 0 {
		if _, err := c.TagQueue(ctx, &sqs.TagQueueInput{QueueUrl: aws.String(url), Tags: tags}); err != nil {
			return "", "", fmt.Errorf("tagging queue %s: %w", name, err)
		}
	}
	got, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		return "", "", fmt.Errorf("reading the ARN of queue %s: %w", name, err)
	}
	return url, got.Attributes["QueueArn"], nil
}

func setAttributes(ctx context.Context, c *sqs.Client, url string, attrs map[string]string) error {
	if _, err := c.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(url), Attributes: attrs}); err != nil {
		return fmt.Errorf("setting the attributes of %s: %w", url, err)
	}
	return nil
}

// putRule writes a rule (idempotent) and makes the queue its target.
func putRule(ctx context.Context, c *eventbridge.Client, name string, rule interruptionRule, queueARN string, tags map[string]string) error {
	_, err := c.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String(name), EventPattern: aws.String(rule.pattern()),
		State: ebtypes.RuleStateEnabled, Tags: eventbridgeTags(tags),
		Description: aws.String("Stowage: " + rule.DetailTypes[0] + " events to the interruption queue")})
	if err != nil {
		return fmt.Errorf("putting rule %s: %w", name, err)
	}
	out, err := c.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String(name),
		Targets: []ebtypes.Target{{Id: aws.String(ruleTargetID), Arn: aws.String(queueARN)}}})
	if err == nil && out.FailedEntryCount > 0 {
		err = fmt.Errorf("%s", aws.ToString(out.FailedEntries[0].ErrorMessage))
	}
	if err != nil {
		return fmt.Errorf("targeting the queue with rule %s: %w", name, err)
	}
	return nil
}

func untagQueues(ctx context.Context, c queueClients, m queueModel, have, want map[string]string) error {
	var gone []string
	for k := range have {
		if _, ok := want[k]; !ok {
			gone = append(gone, k)
		}
	}
	if len(gone) == 0 {
		return nil
	}
	for _, url := range []string{m.URL.ValueString(), m.DLQURL.ValueString()} {
		if _, err := c.sqs.UntagQueue(ctx, &sqs.UntagQueueInput{QueueUrl: aws.String(url), TagKeys: gone}); err != nil {
			return err
		}
	}
	return nil
}

// Read rebuilds the model from the queues and rules as they are: a setting
// changed by hand, a dead-letter queue or a rule gone shows as a change the
// next apply undoes.
func (r *queueResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m queueModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	c, ok := r.clients(ctx, &resp.Diagnostics)
	if !ok || resp.Diagnostics.HasError() {
		return
	}
	name := m.ID.ValueString()
	attrs, url, err := queueAttributes(ctx, c.sqs, name)
	if err != nil {
		resp.Diagnostics.AddError("Reading the interruption queue", err.Error())
		return
	}
	if attrs == nil {
		resp.State.RemoveResource(ctx)
		return
	}
	m.Name, m.URL, m.ARN = types.StringValue(name), types.StringValue(url), types.StringValue(attrs["QueueArn"])
	if m.RulePrefix.IsNull() || m.RulePrefix.IsUnknown() {
		m.RulePrefix = m.Name
	}
	if err := m.readDLQ(ctx, c.sqs); err != nil {
		resp.Diagnostics.AddError("Reading the dead-letter queue", err.Error())
		return
	}
	m.readAttributes(attrs) // after the dead-letter queue: the redrive must name it
	tags, err := c.sqs.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: aws.String(url)})
	if err != nil {
		resp.Diagnostics.AddError("Reading the interruption queue's tags", err.Error())
		return
	}
	m.Tags = mapValue(tags.Tags, m.Tags)
	if err := m.readRules(ctx, c.events); err != nil {
		resp.Diagnostics.AddError("Reading the interruption rules", err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// queueAttributes reads every attribute of a queue; nil when there is none.
func queueAttributes(ctx context.Context, c *sqs.Client, name string) (map[string]string, string, error) {
	got, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	if isNotFound(err) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	out, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: got.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll}})
	if err != nil {
		return nil, "", err
	}
	return out.Attributes, aws.ToString(got.QueueUrl), nil
}

func int64Attr(attrs map[string]string, name string) types.Int64 {
	n, err := strconv.ParseInt(attrs[name], 10, 64)
	if err != nil {
		return types.Int64Null()
	}
	return types.Int64Value(n)
}

func (m *queueModel) readAttributes(attrs map[string]string) {
	m.Retention, m.Visibility = int64Attr(attrs, "MessageRetentionPeriod"), int64Attr(attrs, "VisibilityTimeout")
	m.KMSKeyID = types.StringNull()
	if k := attrs["KmsMasterKeyId"]; k != "" {
		m.KMSKeyID = types.StringValue(k)
	}
	target, maxReceives := redriveMax(attrs["RedrivePolicy"])
	m.MaxReceiveCount = types.Int64Null()
	if target != "" && target == m.DLQARN.ValueString() {
		m.MaxReceiveCount = types.Int64Value(maxReceives)
	}
	if !sameJSON(attrs["Policy"], m.PolicyJSON.ValueString()) {
		m.PolicyJSON = types.StringValue(attrs["Policy"])
	}
}

// readDLQ reads the dead-letter queue; one missing, or whose policy lets in
// plain HTTP, reads as no retention, which the next apply sets again.
func (m *queueModel) readDLQ(ctx context.Context, c *sqs.Client) error {
	attrs, url, err := queueAttributes(ctx, c, m.Name.ValueString()+"-dlq")
	if err != nil {
		return err
	}
	m.DLQRetention = types.Int64Null()
	if attrs == nil {
		return nil
	}
	m.DLQURL, m.DLQARN = types.StringValue(url), types.StringValue(attrs["QueueArn"])
	if sameJSON(attrs["Policy"], dlqPolicy(attrs["QueueArn"])) {
		m.DLQRetention = int64Attr(attrs, "MessageRetentionPeriod")
	}
	return nil
}

// readRules keeps each rule's ARN when it is enabled, has its pattern and
// targets the queue, and empties it otherwise.
func (m *queueModel) readRules(ctx context.Context, c *eventbridge.Client) error {
	out := map[string]string{}
	for _, rule := range interruptionRules {
		name := ruleName(m.RulePrefix.ValueString(), rule)
		out[rule.Name] = ""
		got, err := c.DescribeRule(ctx, &eventbridge.DescribeRuleInput{Name: aws.String(name)})
		if isNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		if got.State != ebtypes.RuleStateEnabled || !sameJSON(aws.ToString(got.EventPattern), rule.pattern()) {
			continue
		}
		targets, err := c.ListTargetsByRule(ctx, &eventbridge.ListTargetsByRuleInput{Rule: aws.String(name)})
		if err != nil {
			return err
		}
		for _, t := range targets.Targets {
			if aws.ToString(t.Arn) == m.ARN.ValueString() {
				out[rule.Name] = aws.ToString(got.Arn)
			}
		}
	}
	m.Rules = mapValue(out, types.MapValueMust(types.StringType, nil))
	return nil
}

func (r *queueResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m queueModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	c, ok := r.clients(ctx, &resp.Diagnostics)
	if !ok || resp.Diagnostics.HasError() {
		return
	}
	for _, rule := range interruptionRules {
		name := aws.String(ruleName(m.RulePrefix.ValueString(), rule))
		if _, err := c.events.RemoveTargets(ctx, &eventbridge.RemoveTargetsInput{Rule: name, Ids: []string{ruleTargetID}}); err != nil && !isNotFound(err) {
			resp.Diagnostics.AddError("Removing the queue from rule "+*name, err.Error())
			return
		}
		if _, err := c.events.DeleteRule(ctx, &eventbridge.DeleteRuleInput{Name: name}); err != nil && !isNotFound(err) {
			resp.Diagnostics.AddError("Deleting rule "+*name, err.Error()+"; a target added by hand keeps it: remove it, then destroy again")
			return
		}
	}
	for _, name := range []string{m.ID.ValueString(), m.ID.ValueString() + "-dlq"} {
		got, err := c.sqs.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
		if err == nil {
			_, err = c.sqs.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: got.QueueUrl})
		}
		if err != nil && !isNotFound(err) {
			resp.Diagnostics.AddError("Deleting queue "+name, err.Error())
			return
		}
	}
}
