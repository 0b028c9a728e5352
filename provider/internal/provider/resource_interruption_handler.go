package provider

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/stowage-dev/stowage/controller/aws/iampolicy"
	lambdarbac "github.com/stowage-dev/stowage/controller/deploy/lambda"
	"github.com/stowage-dev/stowage/lambda/config"
	"github.com/stowage-dev/stowage/provider/internal/lambdazip"
)

var (
	_ resource.ResourceWithConfigure      = (*handlerResource)(nil)
	_ resource.ResourceWithImportState    = (*handlerResource)(nil)
	_ resource.ResourceWithValidateConfig = (*handlerResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*handlerResource)(nil)
)

var functionNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// handlerResource is the interruption Lambda, deployed from the code the
// provider embeds, with everything around it: its role and policy, its log
// group, the event source mapping from the queue, its EKS access entry and
// the ClusterRole that entry's group is bound to.
type handlerResource struct{ awsBase }

func newHandlerResource() resource.Resource { return &handlerResource{} }

type handlerModel struct {
	ID               types.String `tfsdk:"id"`
	Name             types.String `tfsdk:"name"`
	QueueARN         types.String `tfsdk:"queue_arn"`
	ClusterName      types.String `tfsdk:"cluster_name"`
	ClusterEndpoint  types.String `tfsdk:"cluster_endpoint"`
	ClusterCA        types.String `tfsdk:"cluster_ca_data"`
	Architecture     types.String `tfsdk:"architecture"`
	Rebalance        types.String `tfsdk:"rebalance_recommendation"`
	LogLevel         types.String `tfsdk:"log_level"`
	LogRetentionDays types.Int64  `tfsdk:"log_retention_days"`
	Timeout          types.Int64  `tfsdk:"timeout_seconds"`
	MemorySize       types.Int64  `tfsdk:"memory_size"`
	BatchSize        types.Int64  `tfsdk:"batch_size"`
	BatchWindow      types.Int64  `tfsdk:"maximum_batching_window_seconds"`
	SubnetIDs        types.Set    `tfsdk:"subnet_ids"`
	SecurityGroupIDs types.Set    `tfsdk:"security_group_ids"`
	Tags             types.Map    `tfsdk:"tags"`
	FunctionARN      types.String `tfsdk:"function_arn"`
	RoleARN          types.String `tfsdk:"role_arn"`
	LogGroup         types.String `tfsdk:"log_group_name"`
	MappingID        types.String `tfsdk:"event_source_mapping_id"`
	CodeSHA256       types.String `tfsdk:"code_sha256"`
	PolicyJSON       types.String `tfsdk:"policy_json"`
	AccessGroups     types.List   `tfsdk:"access_entry_groups"`
	ClusterRole      types.String `tfsdk:"cluster_role"`
}

// logRetentionDays are the retention periods CloudWatch Logs accepts.
var logRetentionDays = []int64{1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}

func (r *handlerResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_interruption_handler"
}

func (r *handlerResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	keep := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	num := func(def int64, d string) schema.Attribute {
		return schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(def), MarkdownDescription: d}
	}
	computed := func(d string) schema.Attribute { return schema.StringAttribute{Computed: true, MarkdownDescription: d} }
	days := make([]string, len(logRetentionDays))
	for i, d := range logRetentionDays {
		days[i] = strconv.FormatInt(d, 10)
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "The interruption Lambda: it reads the warnings of `stowage_interruption_queue` and marks the Nodes " +
			"they name, for the controller to replace. Its code is embedded in the provider, built from the provider's own " +
			"commit, so it always matches the controller of the same release; a provider upgrade updates it in place. With it: its " +
			"IAM role, with only what its event source mapping needs on the queue and its log group (`policy_json`); its log group " +
			"with a retention; the SQS event source mapping, reporting failed records (`ReportBatchItemFailures`); optional VPC " +
			"settings, for a cluster whose endpoint is private; and its EKS access entry, which maps the role to the group `" +
			lambdarbac.Group + "`, bound here to the ClusterRole `" + lambdarbac.ClusterRole + "` (get, list and update on Nodes, " +
			"list and update on NodeClaims, nothing else). Read back for drift; importable by the function's name.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, PlanModifiers: keep, MarkdownDescription: "The function's name."},
			"name": schema.StringAttribute{Required: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				MarkdownDescription: "Name of the function and of its role, such as `prod-interruption`."},
			"queue_arn":        schema.StringAttribute{Required: true, MarkdownDescription: "The queue to read: `stowage_interruption_queue.<name>.arn`."},
			"cluster_name":     schema.StringAttribute{Required: true, MarkdownDescription: "The EKS cluster: its tokens are signed for it, and its access entry maps the role."},
			"cluster_endpoint": schema.StringAttribute{Required: true, MarkdownDescription: "The cluster's https endpoint."},
			"cluster_ca_data":  schema.StringAttribute{Required: true, MarkdownDescription: "The cluster's CA, base64 PEM, as EKS's `certificateAuthority.data`."},
			"architecture": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("arm64"),
				MarkdownDescription: "`arm64` (the default: cheaper) or `x86_64`."},
			"rebalance_recommendation": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("ignore"),
				MarkdownDescription: "What a rebalance recommendation does: `ignore` (the default) or `mark` the Node."},
			"log_level": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("info"),
				MarkdownDescription: "trace, debug, info, warn or error."},
			"log_retention_days":              num(14, "Days the log group keeps the function's logs: one of "+strings.Join(days, ", ")+"."),
			"timeout_seconds":                 num(30, "The function's timeout; the queue's visibility timeout must be at least as long."),
			"memory_size":                     num(128, "The function's memory, in MB."),
			"batch_size":                      num(10, "Records per invocation, 1 to 10."),
			"maximum_batching_window_seconds": num(0, "How long the mapping gathers records before an invocation, 0 to 300."),
			"subnet_ids": schema.SetAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "Subnets of the function, " +
				"for a cluster whose endpoint is private; with `security_group_ids`."},
			"security_group_ids": schema.SetAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "Security groups of the function in the VPC."},
			"tags":               schema.MapAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "Tags of the role and the log group."},
			"function_arn":       schema.StringAttribute{Computed: true, PlanModifiers: keep, MarkdownDescription: "ARN of the function."},
			"role_arn":           schema.StringAttribute{Computed: true, PlanModifiers: keep, MarkdownDescription: "ARN of the function's role."},
			"log_group_name":     computed("The function's log group, `/aws/lambda/<name>`."),
			"event_source_mapping_id": schema.StringAttribute{Computed: true, MarkdownDescription: "Id of the event source mapping; " +
				"empty when found missing, which the next apply makes again."},
			"code_sha256": computed("Digest of the function's code (base64 SHA-256), the code this provider embeds for the architecture; " +
				"a provider upgrade changes it, and the apply updates the function in place."),
			"policy_json": computed("The role's policy."),
			"access_entry_groups": schema.ListAttribute{Computed: true, ElementType: types.StringType,
				MarkdownDescription: "Groups the access entry gives the role: `" + lambdarbac.Group + "`."},
			"cluster_role": computed("The ClusterRole the group is bound to; empty when found missing or changed."),
		},
	}
}

// env is the function's environment: what lambda/config reads.
func (m handlerModel) env() map[string]string {
	return map[string]string{config.EnvClusterName: m.ClusterName.ValueString(), config.EnvClusterEndpoint: m.ClusterEndpoint.ValueString(),
		config.EnvClusterCA: m.ClusterCA.ValueString(), config.EnvRebalance: m.Rebalance.ValueString(), config.EnvLogLevel: m.LogLevel.ValueString()}
}

// envAttributes name the attribute behind each variable, for errors.
var envAttributes = map[string]string{config.EnvClusterName: "cluster_name", config.EnvClusterEndpoint: "cluster_endpoint",
	config.EnvClusterCA: "cluster_ca_data", config.EnvRebalance: "rebalance_recommendation", config.EnvLogLevel: "log_level"}

func (r *handlerResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m handlerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	bad := func(attr, msg string) { resp.Diagnostics.AddAttributeError(path.Root(attr), "Invalid "+attr, msg) }
	if v := m.Name; !v.IsUnknown() && !functionNamePattern.MatchString(v.ValueString()) {
		bad("name", fmt.Sprintf("%q is not a function name: use 1 to 64 of A-Z, a-z, 0-9, - and _", v.ValueString()))
	}
	if v := m.Architecture; !v.IsNull() && !v.IsUnknown() {
		if _, ok := lambdazip.Architectures[v.ValueString()]; !ok {
			bad("architecture", v.ValueString()+" is not arm64 or x86_64")
		}
	}
	if v := m.LogRetentionDays; !v.IsNull() && !v.IsUnknown() && !slices.Contains(logRetentionDays, v.ValueInt64()) {
		bad("log_retention_days", fmt.Sprintf("%d is not a retention CloudWatch Logs offers: use 14, 30, 90...", v.ValueInt64()))
	}
	r.validateRanges(m, bad)
	if m.SubnetIDs.IsNull() != m.SecurityGroupIDs.IsNull() {
		bad("subnet_ids", "subnet_ids and security_group_ids go together: set both (a function in a VPC), or neither")
	}
	r.validateEnv(m, bad)
}

func (r *handlerResource) validateRanges(m handlerModel, bad func(attr, msg string)) {
	for _, b := range []struct {
		attr   string
		v      types.Int64
		lo, hi int64
	}{{"timeout_seconds", m.Timeout, 1, 900}, {"memory_size", m.MemorySize, 128, 10240}, {"batch_size", m.BatchSize, 1, 10},
		{"maximum_batching_window_seconds", m.BatchWindow, 0, 300}} {
		if !b.v.IsNull() && !b.v.IsUnknown() && (b.v.ValueInt64() < b.lo || b.v.ValueInt64() > b.hi) {
			bad(b.attr, fmt.Sprintf("%d is not from %d to %d", b.v.ValueInt64(), b.lo, b.hi))
		}
	}
}

// validateEnv reads the environment as the function will, with its own
// configuration code, and names the attribute behind a variable it refuses.
func (r *handlerResource) validateEnv(m handlerModel, bad func(attr, msg string)) {
	for _, v := range []types.String{m.ClusterName, m.ClusterEndpoint, m.ClusterCA, m.Rebalance, m.LogLevel} {
		if v.IsUnknown() {
			return
		}
	}
	env := m.env()
	if env[config.EnvRebalance] == "" {
		env[config.EnvRebalance] = "ignore"
	}
	if _, err := config.FromEnv(func(k string) string { return env[k] }); err != nil {
		for k, attr := range envAttributes {
			if strings.HasPrefix(err.Error(), k) {
				bad(attr, err.Error())
				return
			}
		}
		bad("cluster_endpoint", err.Error())
	}
	if l := m.LogLevel.ValueString(); l != "" && !slices.Contains([]string{"trace", "debug", "info", "warn", "error"}, l) {
		bad("log_level", l+" is not trace, debug, info, warn or error")
	}
}

// ModifyPlan plans what follows from the configuration: the code of this
// provider (so that an upgrade is an update), the role's policy, the access
// entry's groups and the ClusterRole; what Read found missing is planned back.
func (r *handlerResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var m handlerModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	var state *handlerModel
	if !req.State.Raw.IsNull() {
		state = &handlerModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	m.ID, m.LogGroup, m.ClusterRole = m.Name, types.StringValue("/aws/lambda/"+m.Name.ValueString()), types.StringValue(lambdarbac.ClusterRole)
	m.AccessGroups, _ = types.ListValueFrom(ctx, types.StringType, []string{lambdarbac.Group})
	m.CodeSHA256 = types.StringUnknown()
	if !m.Architecture.IsUnknown() {
		code, err := lambdazip.Code(m.Architecture.ValueString())
		if err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("architecture"), "The Lambda's code is missing", err.Error())
			return
		}
		m.CodeSHA256 = types.StringValue(lambdazip.SHA256(code))
	}
	m.MappingID = types.StringUnknown()
	if state != nil && state.MappingID.ValueString() != "" && m.QueueARN.Equal(state.QueueARN) {
		m.MappingID = state.MappingID
	}
	m.PolicyJSON = types.StringUnknown()
	if doc, err := r.policy(ctx, m, &resp.Diagnostics); err == nil {
		m.PolicyJSON = types.StringValue(doc)
		if state != nil && sameJSON(doc, state.PolicyJSON.ValueString()) {
			m.PolicyJSON = state.PolicyJSON
		}
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &m)...)
}

// policy is the role's policy for the model, once its inputs are known.
func (r *handlerResource) policy(ctx context.Context, m handlerModel, diags *diag.Diagnostics) (string, error) {
	if m.QueueARN.IsUnknown() || m.Name.IsUnknown() || m.SubnetIDs.IsUnknown() || m.SecurityGroupIDs.IsUnknown() {
		return "", fmt.Errorf("not known yet")
	}
	parts := strings.Split(m.QueueARN.ValueString(), ":")
	if len(parts) != 6 {
		diags.AddAttributeError(path.Root("queue_arn"), "Invalid queue_arn", m.QueueARN.ValueString()+" is not an SQS queue ARN: use stowage_interruption_queue.<name>.arn")
		return "", fmt.Errorf("bad queue ARN")
	}
	doc, err := iampolicy.Lambda(iampolicy.LambdaConfig{Partition: parts[1], Region: parts[3], AccountID: parts[4],
		QueueARN: m.QueueARN.ValueString(), LogGroup: "/aws/lambda/" + m.Name.ValueString(),
		SubnetIDs: setStrings(ctx, m.SubnetIDs, diags), SecurityGroupIDs: setStrings(ctx, m.SecurityGroupIDs, diags)})
	if err != nil {
		diags.AddAttributeError(path.Root("queue_arn"), "Generating the Lambda's policy", err.Error())
		return "", err
	}
	return doc.JSON(), nil
}

func (r *handlerResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
}
