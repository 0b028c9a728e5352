package provider

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var _ resource.ResourceWithConfigure = (*spotRoleResource)(nil)

// spotRole is the service-linked role EC2 needs to launch spot instances;
// it creates it on an account's first spot launch when the caller may.
const spotRole = "AWSServiceRoleForEC2Spot"

// spotRoleResource makes sure the account has the spot service-linked role,
// for accounts that have never run spot and a controller that may not
// create it (which Stowage's controller policy does not allow).
type spotRoleResource struct{ awsBase }

func newSpotRoleResource() resource.Resource { return &spotRoleResource{} }

type spotRoleModel struct {
	ID  types.String `tfsdk:"id"`
	ARN types.String `tfsdk:"arn"`
}

func (r *spotRoleResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_spot_service_linked_role"
}

func (r *spotRoleResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	keep := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "The account's spot service-linked role, `" + spotRole + "`, which EC2 needs to launch spot instances. " +
			"EC2 creates it on an account's first spot launch if the caller may (`iam:CreateServiceLinkedRole` for " +
			"`spot.amazonaws.com`), which Stowage's controller policy does not allow: an account that has never run spot " +
			"needs this resource (or the role made once by hand), else spot launches fail with " +
			"`AuthFailure.ServiceLinkedRoleCreationNotPermitted`. Adopts the role when it exists; destroying the resource " +
			"leaves the role, which the account's other spot users rely on.",
		Attributes: map[string]schema.Attribute{
			"id":  schema.StringAttribute{Computed: true, PlanModifiers: keep, MarkdownDescription: "The role's name, `" + spotRole + "`."},
			"arn": schema.StringAttribute{Computed: true, PlanModifiers: keep, MarkdownDescription: "The role's ARN."},
		},
	}
}

func (r *spotRoleResource) Create(ctx context.Context, _ resource.CreateRequest, resp *resource.CreateResponse) {
	cfg, ok := r.aws(ctx, &resp.Diagnostics)
	if !ok {
		return
	}
	c := iam.NewFromConfig(cfg)
	_, err := c.CreateServiceLinkedRole(ctx, &iam.CreateServiceLinkedRoleInput{AWSServiceName: aws.String("spot.amazonaws.com")})
	if err != nil && !strings.Contains(err.Error(), "has been taken") { // the account has it already: adopt it
		resp.Diagnostics.AddError("Creating the spot service-linked role", err.Error()+
			"; the caller needs iam:CreateServiceLinkedRole for spot.amazonaws.com, or create the role once by hand")
		return
	}
	m, found := r.read(ctx, c, &resp.Diagnostics)
	if !found && !resp.Diagnostics.HasError() {
		resp.Diagnostics.AddError("Reading the spot service-linked role", spotRole+" is not there after its creation")
	}
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

func (r *spotRoleResource) read(ctx context.Context, c *iam.Client, diags interface{ AddError(string, string) }) (spotRoleModel, bool) {
	out, err := c.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(spotRole)})
	if isNotFound(err) {
		return spotRoleModel{}, false
	}
	if err != nil {
		diags.AddError("Reading the spot service-linked role", err.Error())
		return spotRoleModel{}, false
	}
	return spotRoleModel{ID: types.StringValue(spotRole), ARN: types.StringValue(aws.ToString(out.Role.Arn))}, true
}

func (r *spotRoleResource) Read(ctx context.Context, _ resource.ReadRequest, resp *resource.ReadResponse) {
	cfg, ok := r.aws(ctx, &resp.Diagnostics)
	if !ok {
		return
	}
	m, found := r.read(ctx, iam.NewFromConfig(cfg), &resp.Diagnostics)
	switch {
	case resp.Diagnostics.HasError():
	case !found:
		resp.State.RemoveResource(ctx)
	default:
		resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
	}
}

// Update has nothing to change: the resource has no arguments.
func (r *spotRoleResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m spotRoleModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

// Delete leaves the role: the account's other spot users rely on it.
func (r *spotRoleResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {
}
