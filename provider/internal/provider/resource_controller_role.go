package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/stowage-dev/stowage/controller/deploy"
)

var (
	_ resource.ResourceWithConfigure      = (*controllerRoleResource)(nil)
	_ resource.ResourceWithImportState    = (*controllerRoleResource)(nil)
	_ resource.ResourceWithValidateConfig = (*controllerRoleResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*controllerRoleResource)(nil)
)

// controllerPolicyName names the controller role's inline policy.
const controllerPolicyName = "StowageController"

var oidcARNPattern = regexp.MustCompile(`^arn:aws[a-z-]*:iam::[0-9]{12}:oidc-provider/[^/]+(/.+)?$`)

// controllerRoleResource is the controller's IAM role: trusted by the
// cluster's OIDC provider for the controller's service account (IRSA), or by
// EKS Pod Identity with an association for it, and holding its policy.
type controllerRoleResource struct{ awsBase }

func newControllerRoleResource() resource.Resource { return &controllerRoleResource{} }

type controllerRoleModel struct {
	ID                 types.String `tfsdk:"id"`
	Name               types.String `tfsdk:"name"`
	Path               types.String `tfsdk:"path"`
	Description        types.String `tfsdk:"description"`
	MaxSession         types.Int64  `tfsdk:"max_session_duration"`
	Tags               types.Map    `tfsdk:"tags"`
	PolicyJSON         types.String `tfsdk:"policy_json"`
	Namespace          types.String `tfsdk:"namespace"`
	ServiceAccount     types.String `tfsdk:"service_account"`
	OIDCProviderARN    types.String `tfsdk:"oidc_provider_arn"`
	PodIdentityCluster types.String `tfsdk:"pod_identity_cluster_name"`
	ARN                types.String `tfsdk:"arn"`
	UniqueID           types.String `tfsdk:"unique_id"`
	TrustPolicyJSON    types.String `tfsdk:"trust_policy_json"`
	AssociationID      types.String `tfsdk:"pod_identity_association_id"`
}

func (r *controllerRoleResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_controller_role"
}

func (r *controllerRoleResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	keep := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "The IAM role Stowage's controller runs as, with its policy (`stowage_controller_policy`'s `json`) as an " +
			"inline policy. Trusted either by the cluster's OIDC provider for the controller's service account only (IRSA: set " +
			"`oidc_provider_arn`, and give `arn` to `stowage_controller`'s `role_arn`), or by EKS Pod Identity, with the association " +
			"for that service account made here (set `pod_identity_cluster_name`). Read back for drift, importable by name " +
			"(`name,cluster` for Pod Identity).",
		Attributes: map[string]schema.Attribute{
			"id":   schema.StringAttribute{Computed: true, PlanModifiers: keep, MarkdownDescription: "The role's name."},
			"name": schema.StringAttribute{Required: true, PlanModifiers: replace, MarkdownDescription: "Name of the role, such as `StowageController-prod`; changing it replaces the role."},
			"path": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("/"), PlanModifiers: replace,
				MarkdownDescription: "IAM path of the role; `/` by default."},
			"description": schema.StringAttribute{Optional: true, MarkdownDescription: "Description of the role."},
			"max_session_duration": schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(3600),
				MarkdownDescription: "Longest session, in seconds (3600 to 43200)."},
			"tags":        schema.MapAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "Tags of the role."},
			"policy_json": schema.StringAttribute{Required: true, MarkdownDescription: "The controller's policy: `data.stowage_controller_policy.<name>.json`."},
			"namespace": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(deploy.Namespace),
				MarkdownDescription: "Namespace of the controller's service account; `" + deploy.Namespace + "`, where `stowage_controller` installs it."},
			"service_account": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(deploy.ServiceAccount),
				MarkdownDescription: "The controller's service account; `" + deploy.ServiceAccount + "`."},
			"oidc_provider_arn": schema.StringAttribute{Optional: true, MarkdownDescription: "For IRSA: the ARN of the cluster's IAM OIDC " +
				"provider (arn:aws:iam::<account>:oidc-provider/oidc.eks.<region>.amazonaws.com/id/<id>). Set it or `pod_identity_cluster_name`."},
			"pod_identity_cluster_name": schema.StringAttribute{Optional: true, MarkdownDescription: "For EKS Pod Identity: the cluster " +
				"whose Pod Identity agent gives the service account this role; the association is made here. Set it or `oidc_provider_arn`."},
			"arn":               schema.StringAttribute{Computed: true, PlanModifiers: keep, MarkdownDescription: "ARN of the role."},
			"unique_id":         schema.StringAttribute{Computed: true, PlanModifiers: keep, MarkdownDescription: "The role's unique id."},
			"trust_policy_json": schema.StringAttribute{Computed: true, MarkdownDescription: "The role's trust policy."},
			"pod_identity_association_id": schema.StringAttribute{Computed: true,
				MarkdownDescription: "Id of the Pod Identity association; empty with IRSA."},
		},
	}
}

func (r *controllerRoleResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m controllerRoleModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	validateIAMName(m.Name, path.Root("name"), &resp.Diagnostics)
	irsa, pod := !m.OIDCProviderARN.IsNull(), !m.PodIdentityCluster.IsNull()
	// A value still unknown (a module's input, during validate) may turn out null.
	if irsa == pod && !m.OIDCProviderARN.IsUnknown() && !m.PodIdentityCluster.IsUnknown() {
		resp.Diagnostics.AddAttributeError(path.Root("oidc_provider_arn"), "Choose IRSA or Pod Identity",
			"set exactly one of oidc_provider_arn (IRSA) and pod_identity_cluster_name (EKS Pod Identity)")
	}
	if v := m.OIDCProviderARN; irsa && !v.IsUnknown() && !oidcARNPattern.MatchString(v.ValueString()) {
		resp.Diagnostics.AddAttributeError(path.Root("oidc_provider_arn"), "Invalid oidc_provider_arn",
			fmt.Sprintf("%q is not an IAM OIDC provider ARN: use arn:aws:iam::<account>:oidc-provider/oidc.eks.<region>.amazonaws.com/id/<id>", v.ValueString()))
	}
	if v := m.PolicyJSON; !v.IsNull() && !v.IsUnknown() {
		var doc map[string]any
		if err := json.Unmarshal([]byte(v.ValueString()), &doc); err != nil || doc["Statement"] == nil {
			resp.Diagnostics.AddAttributeError(path.Root("policy_json"), "Invalid policy_json",
				"not an IAM policy document: use data.stowage_controller_policy.<name>.json")
		}
	}
	if v := m.MaxSession; !v.IsNull() && !v.IsUnknown() && (v.ValueInt64() < 3600 || v.ValueInt64() > 43200) {
		resp.Diagnostics.AddAttributeError(path.Root("max_session_duration"), "Invalid max_session_duration",
			fmt.Sprintf("%d is not from 3600 to 43200 seconds", v.ValueInt64()))
	}
}

// irsaTrust trusts the OIDC provider's tokens for one service account, for STS.
func irsaTrust(providerARN, namespace, serviceAccount string) string {
	issuer := providerARN[strings.Index(providerARN, ":oidc-provider/")+len(":oidc-provider/"):]
	return compactJSON(map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{
		"Effect": "Allow", "Principal": map[string]any{"Federated": providerARN}, "Action": "sts:AssumeRoleWithWebIdentity",
		"Condition": map[string]any{"StringEquals": map[string]any{
			issuer + ":sub": "system:serviceaccount:" + namespace + ":" + serviceAccount, issuer + ":aud": "sts.amazonaws.com"}}}}})
}

// podIdentityTrust trusts the EKS Pod Identity agent, for one cluster.
func podIdentityTrust(clusterARN string) string {
	account := strings.Split(clusterARN, ":")[4]
	return compactJSON(map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{
		"Effect": "Allow", "Principal": map[string]any{"Service": "pods.eks.amazonaws.com"}, "Action": []string{"sts:AssumeRole", "sts:TagSession"},
		"Condition": map[string]any{"StringEquals": map[string]any{"aws:SourceAccount": account},
			"ArnEquals": map[string]any{"aws:SourceArn": clusterARN}}}}})
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps and strings always marshal
	}
	return string(b)
}

// ModifyPlan plans the trust policy (known for IRSA; for Pod Identity once
// the cluster is known), and an association found missing is planned back.
func (r *controllerRoleResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan controllerRoleModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	var state *controllerRoleModel
	if !req.State.Raw.IsNull() {
		state = &controllerRoleModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	plan.TrustPolicyJSON, plan.AssociationID = types.StringUnknown(), types.StringUnknown()
	switch {
	case !plan.OIDCProviderARN.IsNull() && !plan.OIDCProviderARN.IsUnknown() && !plan.Namespace.IsUnknown() && !plan.ServiceAccount.IsUnknown():
		plan.TrustPolicyJSON, plan.AssociationID = types.StringValue(irsaTrust(plan.OIDCProviderARN.ValueString(),
			plan.Namespace.ValueString(), plan.ServiceAccount.ValueString())), types.StringValue("")
	case state != nil && plan.PodIdentityCluster.Equal(state.PodIdentityCluster) && plan.Namespace.Equal(state.Namespace) &&
		plan.ServiceAccount.Equal(state.ServiceAccount) && state.AssociationID.ValueString() != "":
		plan.AssociationID = state.AssociationID
		if arn := clusterARNOf(state.TrustPolicyJSON.ValueString()); arn != "" {
			plan.TrustPolicyJSON = types.StringValue(podIdentityTrust(arn))
		}
	}
	if state != nil && sameJSON(plan.TrustPolicyJSON.ValueString(), state.TrustPolicyJSON.ValueString()) {
		plan.TrustPolicyJSON = state.TrustPolicyJSON
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// clusterARNOf reads the cluster a Pod Identity trust policy names.
func clusterARNOf(trust string) string {
	var doc struct {
		Statement []struct {
			Condition map[string]map[string]any
		}
	}
	if json.Unmarshal([]byte(trust), &doc) != nil {
		return ""
	}
	for _, s := range doc.Statement {
		if v, ok := s.Condition["ArnEquals"]["aws:SourceArn"].(string); ok {
			return v
		}
	}
	return ""
}

// trustFor computes the trust policy of the configuration, describing the
// cluster for Pod Identity.
func (r *controllerRoleResource) trustFor(ctx context.Context, cfg aws.Config, m controllerRoleModel) (string, error) {
	if !m.OIDCProviderARN.IsNull() {
		return irsaTrust(m.OIDCProviderARN.ValueString(), m.Namespace.ValueString(), m.ServiceAccount.ValueString()), nil
	}
	out, err := eks.NewFromConfig(cfg).DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(m.PodIdentityCluster.ValueString())})
	if err != nil {
		return "", fmt.Errorf("describing cluster %s (pod_identity_cluster_name): %w", m.PodIdentityCluster.ValueString(), err)
	}
	return podIdentityTrust(aws.ToString(out.Cluster.Arn)), nil
}

func (r *controllerRoleResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m controllerRoleModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	cfg, ok := r.aws(ctx, &resp.Diagnostics)
	if !ok || resp.Diagnostics.HasError() {
		return
	}
	trust, err := r.trustFor(ctx, cfg, m)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("pod_identity_cluster_name"), "Reading the cluster", err.Error())
		return
	}
	c := iam.NewFromConfig(cfg)
	out, err := c.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String(m.Name.ValueString()), Path: aws.String(m.Path.ValueString()),
		AssumeRolePolicyDocument: aws.String(trust), Description: m.Description.ValueStringPointer(),
		MaxSessionDuration: aws.Int32(int32(m.MaxSession.ValueInt64())), Tags: iamTags(stringMap(ctx, m.Tags, &resp.Diagnostics))}) //nolint:gosec // validated range
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Creating the controller role", err.Error())
		return
	}
	m.ID, m.ARN, m.UniqueID = m.Name, types.StringValue(aws.ToString(out.Role.Arn)), types.StringValue(aws.ToString(out.Role.RoleId))
	m.TrustPolicyJSON, m.AssociationID = types.StringValue(trust), types.StringValue("")
	defer func() { resp.Diagnostics.Append(resp.State.Set(ctx, &m)...) }() // the role exists: tainted on a later failure
	if _, err := c.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: aws.String(m.Name.ValueString()),
		PolicyName: aws.String(controllerPolicyName), PolicyDocument: aws.String(m.PolicyJSON.ValueString())}); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("policy_json"), "Putting the controller's policy", err.Error())
		return
	}
	if !m.PodIdentityCluster.IsNull() {
		id, err := r.associate(ctx, cfg, m)
		if err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("pod_identity_cluster_name"), "Associating the role with the service account", err.Error())
			return
		}
		m.AssociationID = types.StringValue(id)
	}
}

func (r *controllerRoleResource) associate(ctx context.Context, cfg aws.Config, m controllerRoleModel) (string, error) {
	out, err := eks.NewFromConfig(cfg).CreatePodIdentityAssociation(ctx, &eks.CreatePodIdentityAssociationInput{
		ClusterName: aws.String(m.PodIdentityCluster.ValueString()), Namespace: aws.String(m.Namespace.ValueString()),
		ServiceAccount: aws.String(m.ServiceAccount.ValueString()), RoleArn: aws.String(m.ARN.ValueString())})
	if err != nil {
		return "", err
	}
	return aws.ToString(out.Association.AssociationId), nil
}

func (r *controllerRoleResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	name, cluster, _ := strings.Cut(req.ID, ",")
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), name)...)
	if cluster != "" {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("pod_identity_cluster_name"), cluster)...)
	}
}
