package provider

import (
	"context"
	"fmt"
	"regexp"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var (
	_ resource.ResourceWithConfigure      = (*queueResource)(nil)
	_ resource.ResourceWithImportState    = (*queueResource)(nil)
	_ resource.ResourceWithValidateConfig = (*queueResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*queueResource)(nil)
)

// ruleTargetID is the id of the queue among each rule's targets.
const ruleTargetID = "stowage-interruption-queue"

var queueNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,76}$`)

// queueResource is the interruption queue: an SQS queue EventBridge rules
// feed with the interruption events, and its dead-letter queue.
type queueResource struct{ awsBase }

func newQueueResource() resource.Resource { return &queueResource{} }

type queueModel struct {
	ID              types.String `tfsdk:"id"`
	Name            types.String `tfsdk:"name"`
	RulePrefix      types.String `tfsdk:"rule_name_prefix"`
	Retention       types.Int64  `tfsdk:"message_retention_seconds"`
	Visibility      types.Int64  `tfsdk:"visibility_timeout_seconds"`
	MaxReceiveCount types.Int64  `tfsdk:"max_receive_count"`
	DLQRetention    types.Int64  `tfsdk:"dlq_message_retention_seconds"`
	KMSKeyID        types.String `tfsdk:"kms_master_key_id"`
	Tags            types.Map    `tfsdk:"tags"`
	ARN             types.String `tfsdk:"arn"`
	URL             types.String `tfsdk:"url"`
	DLQARN          types.String `tfsdk:"dlq_arn"`
	DLQURL          types.String `tfsdk:"dlq_url"`
	PolicyJSON      types.String `tfsdk:"policy_json"`
	Rules           types.Map    `tfsdk:"rules"`
}

func (r *queueResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_interruption_queue"
}

func (r *queueResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	keep := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	seconds := func(def int64, d string) schema.Attribute {
		return schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(def), MarkdownDescription: d}
	}
	var kinds []string
	for _, rule := range interruptionRules {
		kinds = append(kinds, rule.Name)
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "The queue AWS's interruption warnings reach the interruption Lambda through: an SQS queue with " +
			"server-side encryption (SQS-managed, or KMS with `kms_master_key_id`), a dead-letter queue that takes a message after " +
			"`max_receive_count` failed deliveries, a queue policy that lets only EventBridge send (only these rules) and denies " +
			"any access without TLS, and an EventBridge rule per kind of event (docs/guides/interruption.md: " + codeList(kinds) +
			") targeting the queue. Idempotent (an apply after a partial failure takes over what exists), read back for drift, " +
			"importable by name.",
		Attributes: map[string]schema.Attribute{
			"id":   schema.StringAttribute{Computed: true, PlanModifiers: keep, MarkdownDescription: "The queue's name."},
			"name": schema.StringAttribute{Required: true, PlanModifiers: replace, MarkdownDescription: "Name of the queue, such as `prod-interruptions`; the dead-letter queue is `<name>-dlq`."},
			"rule_name_prefix": schema.StringAttribute{Optional: true, Computed: true, PlanModifiers: append(replace, keep...),
				MarkdownDescription: fmt.Sprintf("Prefix of the rules' names (`<prefix>-spot-interruption`...), at most %d characters; the queue's name by default.", maxRulePrefix())},
			"message_retention_seconds": seconds(300, "How long a warning waits in the queue: 300 seconds by default, as a warning "+
				"older than its two minutes' notice is of no use."),
			"visibility_timeout_seconds": seconds(60, "How long a message received stays hidden; at least the Lambda's timeout."),
			"max_receive_count":          seconds(5, "Deliveries of a message before it goes to the dead-letter queue."),
			"dlq_message_retention_seconds": seconds(1209600, "How long the dead-letter queue keeps a message, for inspection: 14 days "+
				"by default."),
			"kms_master_key_id": schema.StringAttribute{Optional: true, MarkdownDescription: "KMS key of SSE-KMS for both queues; " +
				"SQS-managed encryption (SSE-SQS) when unset. The key's policy must let events.amazonaws.com use it."},
			"tags":        schema.MapAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "Tags of both queues and the rules."},
			"arn":         schema.StringAttribute{Computed: true, PlanModifiers: keep, MarkdownDescription: "ARN of the queue."},
			"url":         schema.StringAttribute{Computed: true, PlanModifiers: keep, MarkdownDescription: "URL of the queue."},
			"dlq_arn":     schema.StringAttribute{Computed: true, PlanModifiers: keep, MarkdownDescription: "ARN of the dead-letter queue."},
			"dlq_url":     schema.StringAttribute{Computed: true, PlanModifiers: keep, MarkdownDescription: "URL of the dead-letter queue."},
			"policy_json": schema.StringAttribute{Computed: true, MarkdownDescription: "The queue's policy."},
			"rules": schema.MapAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "The rules' ARNs by kind; " +
				"an empty ARN marks a rule found missing or changed, which the next apply restores."},
		},
	}
}

func (r *queueResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m queueModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if v := m.Name; !v.IsUnknown() && !queueNamePattern.MatchString(v.ValueString()) {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Invalid name", fmt.Sprintf("%q is not a queue name: use 1 to 76 of "+
			"A-Z, a-z, 0-9, - and _ (the dead-letter queue adds -dlq, within SQS's 80)", v.ValueString()))
	}
	if v := m.RulePrefix; !v.IsNull() && !v.IsUnknown() && (len(v.ValueString()) > maxRulePrefix() || !queueNamePattern.MatchString(v.ValueString())) {
		resp.Diagnostics.AddAttributeError(path.Root("rule_name_prefix"), "Invalid rule_name_prefix",
			fmt.Sprintf("%q: use at most %d of A-Z, a-z, 0-9, - and _, so that every rule's name fits EventBridge's 64", v.ValueString(), maxRulePrefix()))
	}
	for _, b := range []struct {
		name    string
		v       types.Int64
		lo, hi  int64
		example string
	}{{"message_retention_seconds", m.Retention, 60, 1209600, "300"}, {"dlq_message_retention_seconds", m.DLQRetention, 60, 1209600, "1209600"},
		{"visibility_timeout_seconds", m.Visibility, 0, 43200, "60"}, {"max_receive_count", m.MaxReceiveCount, 1, 1000, "5"}} {
		if !b.v.IsNull() && !b.v.IsUnknown() && (b.v.ValueInt64() < b.lo || b.v.ValueInt64() > b.hi) {
			resp.Diagnostics.AddAttributeError(path.Root(b.name), "Invalid "+b.name,
				fmt.Sprintf("%d is not from %d to %d, as SQS takes it; e.g. %s", b.v.ValueInt64(), b.lo, b.hi, b.example))
		}
	}
}

// ModifyPlan plans the rule prefix, and, once the queue's ARN is known, the
// rules' ARNs and the policy: a rule or a policy Read found changed is
// planned back.
func (r *queueResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var m queueModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if m.RulePrefix.IsUnknown() && !m.Name.IsUnknown() {
		m.RulePrefix = m.Name
	}
	m.Rules, m.PolicyJSON = types.MapUnknown(types.StringType), types.StringUnknown()
	if arn := m.ARN.ValueString(); !m.ARN.IsUnknown() && arn != "" && !m.RulePrefix.IsUnknown() {
		rules, arns := m.expectedRules()
		m.Rules = mapValue(rules, types.MapValueMust(types.StringType, nil))
		m.PolicyJSON = types.StringValue(queuePolicy(arn, arns))
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &m)...)
}

// expectedRules are the rules' ARNs by kind, and in order.
func (m queueModel) expectedRules() (map[string]string, []string) {
	out, arns := map[string]string{}, []string{}
	for _, rule := range interruptionRules {
		arn := ruleARN(m.ARN.ValueString(), ruleName(m.RulePrefix.ValueString(), rule))
		out[rule.Name], arns = arn, append(arns, arn)
	}
	return out, arns
}

// clients are the two services the queue spans.
type queueClients struct {
	sqs    *sqs.Client
	events *eventbridge.Client
}

func (r *queueResource) clients(ctx context.Context, diags *diag.Diagnostics) (queueClients, bool) {
	cfg, ok := r.aws(ctx, diags)
	if !ok {
		return queueClients{}, false
	}
	return queueClients{sqs: sqs.NewFromConfig(cfg), events: eventbridge.NewFromConfig(cfg)}, true
}

// attributes are the queues' attributes the model sets.
func (m queueModel) attributes() (queue, dlq map[string]string) {
	sse := func(a map[string]string) map[string]string {
		if k := m.KMSKeyID.ValueString(); k != "" {
			a["KmsMasterKeyId"], a["SqsManagedSseEnabled"] = k, "false"
		} else {
			a["SqsManagedSseEnabled"] = "true"
		}
		return a
	}
	queue = sse(map[string]string{"MessageRetentionPeriod": strconv.FormatInt(m.Retention.ValueInt64(), 10),
		"VisibilityTimeout": strconv.FormatInt(m.Visibility.ValueInt64(), 10)})
	dlq = sse(map[string]string{"MessageRetentionPeriod": strconv.FormatInt(m.DLQRetention.ValueInt64(), 10)})
	return queue, dlq
}

func (r *queueResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m queueModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	c, ok := r.clients(ctx, &resp.Diagnostics)
	if !ok || resp.Diagnostics.HasError() {
		return
	}
	m.ID = m.Name
	err := r.converge(ctx, c, &m, stringMap(ctx, m.Tags, &resp.Diagnostics))
	if m.ARN.ValueString() != "" {
		resp.Diagnostics.Append(resp.State.Set(ctx, &m)...) // what exists is recorded; tainted on an error
	}
	if err != nil {
		resp.Diagnostics.AddError("Creating the interruption queue", err.Error())
	}
}

func (r *queueResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m, state queueModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	c, ok := r.clients(ctx, &resp.Diagnostics)
	if !ok || resp.Diagnostics.HasError() {
		return
	}
	tags := stringMap(ctx, m.Tags, &resp.Diagnostics)
	if err := r.converge(ctx, c, &m, tags); err != nil {
		resp.Diagnostics.AddError("Updating the interruption queue", err.Error())
		return
	}
	if err := untagQueues(ctx, c, m, stringMap(ctx, state.Tags, &resp.Diagnostics), tags); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("tags"), "Untagging the interruption queue", err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *queueResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
}

// eventbridgeTags are the rules' tags.
func eventbridgeTags(tags map[string]string) []ebtypes.Tag {
	out := make([]ebtypes.Tag, 0, len(tags))
	for _, k := range sortedKeys(tags) {
		out = append(out, ebtypes.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
	}
	return out
}
