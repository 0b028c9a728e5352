package provider

import (
	"context"
	"fmt"
	"regexp"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var (
	_ resource.ResourceWithConfigure      = (*nodeRoleResource)(nil)
	_ resource.ResourceWithImportState    = (*nodeRoleResource)(nil)
	_ resource.ResourceWithValidateConfig = (*nodeRoleResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*nodeRoleResource)(nil)
)

// nodeRolePolicies are the AWS managed policies a node needs: joining the
// cluster, the VPC CNI's network interfaces, pulling images from ECR, and
// Systems Manager's agent.
var nodeRolePolicies = []string{
	"arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
	"arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
	"arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly",
	"arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore",
}

// ec2Trust lets EC2 instances assume a role: the trust policy of a node role.
const ec2Trust = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`

var (
	iamNamePattern   = regexp.MustCompile(`^[\w+=,.@-]{1,64}$`)
	iamPathPattern   = regexp.MustCompile(`^/([\x21-\x7E]*/)?$`)
	policyARNPattern = regexp.MustCompile(`^arn:aws[a-z-]*:iam::(aws|[0-9]{12}):policy/[\w+=,.@/-]+$`)
)

// nodeRoleResource is the IAM role Stowage's nodes run as, with its instance
// profile and the managed policies a node needs.
type nodeRoleResource struct{ awsBase }

func newNodeRoleResource() resource.Resource { return &nodeRoleResource{} }

type nodeRoleModel struct {
	ID                  types.String `tfsdk:"id"`
	Name                types.String `tfsdk:"name"`
	Path                types.String `tfsdk:"path"`
	Description         types.String `tfsdk:"description"`
	PolicyARNs          types.Set    `tfsdk:"policy_arns"`
	Tags                types.Map    `tfsdk:"tags"`
	ARN                 types.String `tfsdk:"arn"`
	UniqueID            types.String `tfsdk:"unique_id"`
	InstanceProfileName types.String `tfsdk:"instance_profile_name"`
	InstanceProfileARN  types.String `tfsdk:"instance_profile_arn"`
}

func (r *nodeRoleResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_node_role"
}

func (r *nodeRoleResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	keep := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	defaults, _ := types.SetValueFrom(context.Background(), types.StringType, nodeRolePolicies)
	resp.Schema = schema.Schema{
		MarkdownDescription: "The IAM role Stowage's nodes run as: EC2 may assume it, it holds the managed policies a node needs, " +
			"and an instance profile of the same name carries it. Give its `arn` to `stowage_controller_policy` (the controller may " +
			"pass only this role, only to EC2) and its `name` to the node classes' `role`. Read back for drift (a policy detached by " +
			"hand is attached again); importable by name.",
		Attributes: map[string]schema.Attribute{
			"id":   schema.StringAttribute{Computed: true, PlanModifiers: keep, MarkdownDescription: "The role's name."},
			"name": schema.StringAttribute{Required: true, PlanModifiers: replace, MarkdownDescription: "Name of the role and of its instance profile, such as `StowageNodeRole-prod`. Changing it replaces both."},
			"path": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("/"), PlanModifiers: replace,
				MarkdownDescription: "IAM path of the role and the profile; `/` by default."},
			"description": schema.StringAttribute{Optional: true, MarkdownDescription: "Description of the role."},
			"policy_arns": schema.SetAttribute{Optional: true, Computed: true, ElementType: types.StringType, Default: setdefault.StaticValue(defaults),
				MarkdownDescription: "Managed policies attached to the role. By default " + codeList(nodeRolePolicies) +
					"; set it to replace the list (for example without the CNI policy when the VPC CNI uses its own role through IRSA)."},
			"tags":                  schema.MapAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "Tags of the role and the instance profile."},
			"arn":                   schema.StringAttribute{Computed: true, PlanModifiers: keep, MarkdownDescription: "ARN of the role."},
			"unique_id":             schema.StringAttribute{Computed: true, PlanModifiers: keep, MarkdownDescription: "The role's unique id (AROA...)."},
			"instance_profile_name": schema.StringAttribute{Computed: true, MarkdownDescription: "Name of the instance profile: the role's."},
			"instance_profile_arn":  schema.StringAttribute{Computed: true, PlanModifiers: keep, MarkdownDescription: "ARN of the instance profile."},
		},
	}
}

func (r *nodeRoleResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m nodeRoleModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	validateIAMName(m.Name, path.Root("name"), &resp.Diagnostics)
	if v := m.Path; !v.IsNull() && !v.IsUnknown() && !iamPathPattern.MatchString(v.ValueString()) {
		resp.Diagnostics.AddAttributeError(path.Root("path"), "Invalid path", fmt.Sprintf("%q is not an IAM path: use / or /a/path/ (starting and ending with /)", v.ValueString()))
	}
	if m.PolicyARNs.IsUnknown() || m.PolicyARNs.IsNull() {
		return
	}
	var arns []string
	resp.Diagnostics.Append(m.PolicyARNs.ElementsAs(ctx, &arns, false)...)
	for _, a := range arns {
		if !policyARNPattern.MatchString(a) {
			resp.Diagnostics.AddAttributeError(path.Root("policy_arns"), "Invalid policy_arns",
				fmt.Sprintf("%q is not a managed policy ARN: use arn:aws:iam::aws:policy/<name> or arn:aws:iam::<account>:policy/<name>", a))
		}
	}
}

// ModifyPlan plans the instance profile named after the role; one found
// missing (or without the role) by Read is planned back, its ARN to be known.
func (r *nodeRoleResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var name, arn types.String
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("name"), &name)...)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("instance_profile_name"), name)...)
	if !req.State.Raw.IsNull() {
		resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("instance_profile_arn"), &arn)...)
	}
	if arn.ValueString() == "" {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("instance_profile_arn"), types.StringUnknown())...)
	}
}

func validateIAMName(v types.String, at path.Path, diags *diag.Diagnostics) {
	if !v.IsNull() && !v.IsUnknown() && !iamNamePattern.MatchString(v.ValueString()) {
		diags.AddAttributeError(at, "Invalid "+at.String(), fmt.Sprintf("%q is not an IAM name: use 1 to 64 of A-Z, a-z, 0-9 and +=,.@_-", v.ValueString()))
	}
}

func (r *nodeRoleResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m nodeRoleModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	cfg, ok := r.aws(ctx, &resp.Diagnostics)
	if !ok || resp.Diagnostics.HasError() {
		return
	}
	c := iam.NewFromConfig(cfg)
	tags := stringMap(ctx, m.Tags, &resp.Diagnostics)
	out, err := c.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String(m.Name.ValueString()), Path: aws.String(m.Path.ValueString()),
		AssumeRolePolicyDocument: aws.String(ec2Trust), Description: m.Description.ValueStringPointer(), Tags: iamTags(tags)})
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Creating the node role", err.Error())
		return
	}
	m.ID, m.ARN, m.UniqueID = m.Name, types.StringValue(aws.ToString(out.Role.Arn)), types.StringValue(aws.ToString(out.Role.RoleId))
	m.InstanceProfileName, m.InstanceProfileARN = m.Name, types.StringValue("")
	// From here on the role exists: a later failure leaves it in the state, tainted, for the next apply to replace.
	defer func() { resp.Diagnostics.Append(resp.State.Set(ctx, &m)...) }()
	if err := r.attach(ctx, c, m.Name.ValueString(), nil, setStrings(ctx, m.PolicyARNs, &resp.Diagnostics)); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("policy_arns"), "Attaching the node role's policies", err.Error())
		return
	}
	arn, err := r.ensureProfile(ctx, c, m.Name.ValueString(), m.Path.ValueString(), tags)
	if err != nil {
		resp.Diagnostics.AddError("Creating the node role's instance profile", err.Error())
		return
	}
	m.InstanceProfileARN = types.StringValue(arn)
}

func setStrings(ctx context.Context, s types.Set, diags *diag.Diagnostics) []string {
	var out []string
	if !s.IsNull() && !s.IsUnknown() {
		diags.Append(s.ElementsAs(ctx, &out, false)...)
	}
	slices.Sort(out)
	return out
}

// attach makes the role's managed policies want, from have.
func (r *nodeRoleResource) attach(ctx context.Context, c *iam.Client, role string, have, want []string) error {
	for _, a := range want {
		if !slices.Contains(have, a) {
			if _, err := c.AttachRolePolicy(ctx, &iam.AttachRolePolicyInput{RoleName: aws.String(role), PolicyArn: aws.String(a)}); err != nil {
				return fmt.Errorf("attaching %s: %w", a, err)
			}
		}
	}
	for _, a := range have {
		if !slices.Contains(want, a) {
			if _, err := c.DetachRolePolicy(ctx, &iam.DetachRolePolicyInput{RoleName: aws.String(role), PolicyArn: aws.String(a)}); err != nil && !isNotFound(err) {
				return fmt.Errorf("detaching %s: %w", a, err)
			}
		}
	}
	return nil
}

// ensureProfile makes the instance profile named after the role hold it, and
// returns the profile's ARN.
func (r *nodeRoleResource) ensureProfile(ctx context.Context, c *iam.Client, role, rolePath string, tags map[string]string) (string, error) {
	got, err := c.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(role)})
	if isNotFound(err) {
		var out *iam.CreateInstanceProfileOutput
		out, err = c.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: aws.String(role),
			Path: aws.String(rolePath), Tags: iamTags(tags)})
		if err == nil {
			got = &iam.GetInstanceProfileOutput{InstanceProfile: out.InstanceProfile}
		}
	}
	if err != nil {
		return "", fmt.Errorf("instance profile %s: %w", role, err)
	}
	for _, held := range got.InstanceProfile.Roles {
		if aws.ToString(held.RoleName) == role {
			return aws.ToString(got.InstanceProfile.Arn), nil
		}
	}
	if _, err := c.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{InstanceProfileName: aws.String(role), RoleName: aws.String(role)}); err != nil {
		return "", fmt.Errorf("adding role %s to its instance profile: %w", role, err)
	}
	return aws.ToString(got.InstanceProfile.Arn), nil
}

func (r *nodeRoleResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m nodeRoleModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	cfg, ok := r.aws(ctx, &resp.Diagnostics)
	if !ok || resp.Diagnostics.HasError() {
		return
	}
	c := iam.NewFromConfig(cfg)
	name := m.ID.ValueString()
	got, err := c.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(name)})
	if isNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Reading the node role", err.Error())
		return
	}
	role := got.Role
	m.Name, m.Path, m.ARN, m.UniqueID = types.StringValue(name), types.StringValue(aws.ToString(role.Path)),
		types.StringValue(aws.ToString(role.Arn)), types.StringValue(aws.ToString(role.RoleId))
	m.Description = types.StringPointerValue(role.Description)
	tags := map[string]string{}
	for _, t := range role.Tags {
		tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	m.Tags = mapValue(tags, m.Tags)
	attached, err := attachedPolicies(ctx, c, name)
	if err != nil {
		resp.Diagnostics.AddError("Reading the node role's policies", err.Error())
		return
	}
	m.PolicyARNs, _ = types.SetValueFrom(ctx, types.StringType, attached)
	m.InstanceProfileName, m.InstanceProfileARN = types.StringValue(""), types.StringValue("")
	if p, err := c.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)}); err == nil {
		for _, held := range p.InstanceProfile.Roles {
			if aws.ToString(held.RoleName) == name {
				m.InstanceProfileName, m.InstanceProfileARN = types.StringValue(name), types.StringValue(aws.ToString(p.InstanceProfile.Arn))
			}
		}
	} else if !isNotFound(err) {
		resp.Diagnostics.AddError("Reading the node role's instance profile", err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *nodeRoleResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state nodeRoleModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	cfg, ok := r.aws(ctx, &resp.Diagnostics)
	if !ok || resp.Diagnostics.HasError() {
		return
	}
	c := iam.NewFromConfig(cfg)
	name := state.ID.ValueString()
	if _, err := c.UpdateRole(ctx, &iam.UpdateRoleInput{RoleName: aws.String(name), Description: aws.String(plan.Description.ValueString())}); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("description"), "Updating the node role", err.Error())
		return
	}
	if err := retagRole(ctx, c, name, stringMap(ctx, state.Tags, &resp.Diagnostics), stringMap(ctx, plan.Tags, &resp.Diagnostics)); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("tags"), "Tagging the node role", err.Error())
		return
	}
	have, err := attachedPolicies(ctx, c, name)
	if err == nil {
		err = r.attach(ctx, c, name, have, setStrings(ctx, plan.PolicyARNs, &resp.Diagnostics))
	}
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("policy_arns"), "Updating the node role's policies", err.Error())
		return
	}
	arn, err := r.ensureProfile(ctx, c, name, plan.Path.ValueString(), stringMap(ctx, plan.Tags, &resp.Diagnostics))
	if err != nil {
		resp.Diagnostics.AddError("Restoring the node role's instance profile", err.Error())
		return
	}
	plan.InstanceProfileName, plan.InstanceProfileARN = types.StringValue(name), types.StringValue(arn)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *nodeRoleResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m nodeRoleModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	cfg, ok := r.aws(ctx, &resp.Diagnostics)
	if !ok || resp.Diagnostics.HasError() {
		return
	}
	c := iam.NewFromConfig(cfg)
	name := m.ID.ValueString()
	if _, err := c.RemoveRoleFromInstanceProfile(ctx, &iam.RemoveRoleFromInstanceProfileInput{InstanceProfileName: aws.String(name), RoleName: aws.String(name)}); err != nil && !isNotFound(err) {
		resp.Diagnostics.AddError("Removing the node role from its instance profile", err.Error())
		return
	}
	if _, err := c.DeleteInstanceProfile(ctx, &iam.DeleteInstanceProfileInput{InstanceProfileName: aws.String(name)}); err != nil && !isNotFound(err) {
		resp.Diagnostics.AddError("Deleting the node role's instance profile", err.Error())
		return
	}
	if err := freeRole(ctx, c, name); err != nil {
		resp.Diagnostics.AddError("Freeing the node role", err.Error())
		return
	}
	if err := deleteRole(ctx, c, name); err != nil {
		resp.Diagnostics.AddError("Deleting the node role", err.Error())
	}
}

func (r *nodeRoleResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
}
