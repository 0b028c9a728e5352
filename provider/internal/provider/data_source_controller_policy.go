package provider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/iampolicy"
	"github.com/stowage-dev/stowage/controller/aws/sdk"
	"github.com/stowage-dev/stowage/controller/catalogue"
)

var (
	_ datasource.DataSource                   = (*controllerPolicyDataSource)(nil)
	_ datasource.DataSourceWithConfigure      = (*controllerPolicyDataSource)(nil)
	_ datasource.DataSourceWithValidateConfig = (*controllerPolicyDataSource)(nil)
)

// controllerPolicyDataSource generates the controller's least-privilege IAM
// policy (controller/aws/iampolicy) for a cluster and its pools.
type controllerPolicyDataSource struct{ awsBase }

func newControllerPolicyDataSource() datasource.DataSource { return &controllerPolicyDataSource{} }

type controllerPolicyModel struct {
	ClusterName   types.String  `tfsdk:"cluster_name"`
	Region        types.String  `tfsdk:"region"`
	AccountID     types.String  `tfsdk:"account_id"`
	NodeRoleARNs  types.List    `tfsdk:"node_role_arns"`
	NodePools     types.Dynamic `tfsdk:"node_pools"`
	InstanceTypes types.List    `tfsdk:"instance_types"`
	JSON          types.String  `tfsdk:"json"`
	Size          types.Int64   `tfsdk:"size"`
	Launchable    types.List    `tfsdk:"launchable_instance_types"`
	Actions       types.List    `tfsdk:"actions"`
}

func (d *controllerPolicyDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_controller_policy"
}

func (d *controllerPolicyDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.configureDataSource(req, resp)
}

func (d *controllerPolicyDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	var actions []string
	for _, p := range sdk.Permissions {
		actions = append(actions, p.Action)
	}
	list := func(d string) schema.Attribute {
		return schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: d}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "The IAM policy Stowage's controller needs, and nothing more, generated from the calls its AWS layer makes " +
			"(" + codeList(actions) + "): reads pinned to the region; launches only from the cluster's launch templates, of instances, " +
			"volumes and fleets tagged at creation for the cluster and one of its pools, and only of the instance types the pools can " +
			"launch; tags only at creation; terminations only of the cluster's instances; `iam:PassRole` only of the node roles, only " +
			"to EC2. Computed without calling AWS, so it is known at plan time. Give `json` to `stowage_controller_role`.",
		Attributes: map[string]schema.Attribute{
			"cluster_name": schema.StringAttribute{Required: true, MarkdownDescription: "Name of the EKS cluster: the tags the policy requires name it."},
			"region": schema.StringAttribute{Optional: true, MarkdownDescription: "Region of the cluster; the provider's `aws_region` " +
				"(or `AWS_REGION`) when unset."},
			"account_id": schema.StringAttribute{Optional: true, MarkdownDescription: "Account of the cluster; the node roles' account when unset."},
			"node_role_arns": schema.ListAttribute{Required: true, ElementType: types.StringType, MarkdownDescription: "ARNs of the roles " +
				"the node classes name (`stowage_node_role.arn`): the only roles the controller may pass, and only to EC2."},
			"node_pools": schema.DynamicAttribute{Optional: true, MarkdownDescription: "The pools the controller launches for: launches " +
				"must be tagged with one of their names, and be of an instance type one of them allows (from the built-in catalogue). " +
				"A list of objects with each pool's `name` and `requirement`s, or of `stowage_node_pool` resources through a local (as " +
				"for `stowage_plan`). When the pools depend on a `stowage_controller` that runs as the role holding this policy, build " +
				"the objects from the values the pools are made of (see the example): a reference to the pool resources would order " +
				"the role's deletion before the pools', and the controller would lose its permissions while it drains their nodes. " +
				"Without `node_pools`, any pool and any type."},
			"instance_types": schema.ListAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "More instance " +
				"types to allow, beyond the pools'; with neither, any type."},
			"json": schema.StringAttribute{Computed: true, MarkdownDescription: "The policy document, compact JSON."},
			"size": schema.Int64Attribute{Computed: true, MarkdownDescription: fmt.Sprintf("Its size as IAM counts it (characters "+
				"other than white space), within the %d of a role's inline policies; over it, types are listed as family wildcards.", iampolicy.InlineQuota)},
			"launchable_instance_types": list("The instance types (or family wildcards, such as `m6i.*`) the policy lets the controller launch; empty for any."),
			"actions":                   list("Every action the policy allows."),
		},
	}
}

func (d *controllerPolicyDataSource) ValidateConfig(ctx context.Context, req datasource.ValidateConfigRequest, resp *datasource.ValidateConfigResponse) {
	var m controllerPolicyModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || m.NodeRoleARNs.IsNull() || m.NodeRoleARNs.IsUnknown() {
		return
	}
	if len(m.NodeRoleARNs.Elements()) == 0 {
		resp.Diagnostics.AddAttributeError(path.Root("node_role_arns"), "Missing node_role_arns",
			"at least one node role is needed: the ARN of the role nodes run as (stowage_node_role.arn)")
	}
}

func (d *controllerPolicyDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m controllerPolicyModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	cfg := iampolicy.ControllerConfig{Cluster: m.ClusterName.ValueString(), Region: m.Region.ValueString(), AccountID: m.AccountID.ValueString()}
	resp.Diagnostics.Append(m.NodeRoleARNs.ElementsAs(ctx, &cfg.NodeRoleARNs, false)...)
	if !m.InstanceTypes.IsNull() {
		resp.Diagnostics.Append(m.InstanceTypes.ElementsAs(ctx, &cfg.InstanceTypes, false)...)
	}
	if cfg.Region == "" {
		cfg.Region = d.defaultRegion()
	}
	if cfg.AccountID == "" && len(cfg.NodeRoleARNs) > 0 {
		if parts := strings.Split(cfg.NodeRoleARNs[0], ":"); len(parts) > 4 {
			cfg.AccountID = parts[4]
		}
	}
	pools, types, err := poolsAndTypes(ctx, m.NodePools)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("node_pools"), "Reading node_pools", err.Error())
		return
	}
	cfg.NodePools, cfg.InstanceTypes = pools, append(cfg.InstanceTypes, types...)
	doc, err := iampolicy.Controller(cfg)
	if err != nil {
		addFieldErrors(err, &resp.Diagnostics)
		return
	}
	m.setResults(ctx, doc)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (d *controllerPolicyDataSource) defaultRegion() string {
	if d.access != nil && d.access.cfg.AWS.Region != "" {
		return d.access.cfg.AWS.Region
	}
	return os.Getenv("AWS_REGION")
}

func (m *controllerPolicyModel) setResults(ctx context.Context, doc iampolicy.Document) {
	m.JSON, m.Size = types.StringValue(doc.JSON()), types.Int64Value(int64(doc.Size()))
	m.Actions, _ = types.ListValueFrom(ctx, types.StringType, doc.Actions())
	launchable := []string{}
	for _, s := range doc.Statement {
		for _, op := range []string{"StringEquals", "StringLike"} {
			launchable = append(launchable, s.Condition[op]["ec2:InstanceType"]...)
		}
	}
	m.Launchable, _ = types.ListValueFrom(ctx, types.StringType, launchable)
}

// addFieldErrors turns the generator's "field: message" errors into
// diagnostics on those attributes.
func addFieldErrors(err error, diags interface {
	AddAttributeError(path.Path, string, string)
	AddError(string, string)
}) {
	var joined interface{ Unwrap() []error }
	errs := []error{err}
	if errors.As(err, &joined) {
		errs = joined.Unwrap()
	}
	for _, e := range errs {
		field, msg, ok := strings.Cut(e.Error(), ": ")
		name, index, indexed := strings.Cut(strings.TrimSuffix(field, "]"), "[")
		switch {
		case !ok || strings.ContainsAny(name, " "):
			diags.AddError("Generating the policy", e.Error())
		case indexed:
			var i int
			fmt.Sscanf(index, "%d", &i)
			diags.AddAttributeError(path.Root(name).AtListIndex(i), "Invalid "+field, msg)
		default:
			diags.AddAttributeError(path.Root(name), "Invalid "+name, msg)
		}
	}
}

// poolsAndTypes reads the pools' names and the built-in catalogue's types
// their requirements allow.
func poolsAndTypes(ctx context.Context, v types.Dynamic) ([]string, []string, error) {
	elems, err := dynamicElements(ctx, v)
	if err != nil {
		return nil, nil, err
	}
	all := catalogue.InstanceTypes(catalogue.Builtin(), catalogue.DefaultOptions())
	var names, out []string
	for i, e := range elems {
		var np v1alpha1.NodePool
		if err := decodeObject(nodePoolKind, e, &np); err != nil {
			return nil, nil, fmt.Errorf("node_pools[%d]: %w", i, err)
		}
		np.SetDefaults()
		names = append(names, np.Name)
		allowed := iampolicy.PoolInstanceTypes(&np, all)
		if len(allowed) == 0 {
			return nil, nil, fmt.Errorf("node_pools[%d]: pool %s allows no instance type of the catalogue; fix its requirements", i, np.Name)
		}
		for _, it := range allowed {
			if !slices.Contains(out, it) {
				out = append(out, it)
			}
		}
	}
	return names, out, nil
}
