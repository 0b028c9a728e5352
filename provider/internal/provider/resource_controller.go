package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/stowage-dev/stowage/controller/deploy"
)

var (
	_ resource.ResourceWithConfigure      = (*controllerResource)(nil)
	_ resource.ResourceWithImportState    = (*controllerResource)(nil)
	_ resource.ResourceWithValidateConfig = (*controllerResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*controllerResource)(nil)
)

// drifted prefixes a revision Read found changed in the cluster.
const drifted = "drifted: "

// controllerResource installs Stowage's controller in the cluster: the CRDs
// of controller/apis/crds and the manifests of controller/deploy, with the
// settings applied, through server-side apply.
type controllerResource struct{ access *clusterAccess }

func newControllerResource() resource.Resource { return &controllerResource{} }

type controllerModel struct {
	ID                types.String `tfsdk:"id"`
	ClusterName       types.String `tfsdk:"cluster_name"`
	ClusterEndpoint   types.String `tfsdk:"cluster_endpoint"`
	ClusterCABundle   types.String `tfsdk:"cluster_ca_bundle"`
	ClusterCIDR       types.String `tfsdk:"cluster_cidr"`
	Region            types.String `tfsdk:"region"`
	Image             types.String `tfsdk:"image"`
	ImagePullPolicy   types.String `tfsdk:"image_pull_policy"`
	RoleARN           types.String `tfsdk:"role_arn"`
	Replicas          types.Int64  `tfsdk:"replicas"`
	LogLevel          types.String `tfsdk:"log_level"`
	LogFormat         types.String `tfsdk:"log_format"`
	Settings          types.Map    `tfsdk:"settings"`
	CPURequest        types.String `tfsdk:"cpu_request"`
	MemoryRequest     types.String `tfsdk:"memory_request"`
	MemoryLimit       types.String `tfsdk:"memory_limit"`
	DestroyNodeClaims types.Bool   `tfsdk:"destroy_node_claims"`
	Namespace         types.String `tfsdk:"namespace"`
	ServiceAccount    types.String `tfsdk:"service_account"`
	Revision          types.String `tfsdk:"revision"`
}

func (r *controllerResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_controller"
}

func (r *controllerResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	str := func(d string) schema.StringAttribute {
		return schema.StringAttribute{Optional: true, MarkdownDescription: d}
	}
	named := func(v, d string) schema.Attribute {
		return schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(v), MarkdownDescription: d,
			PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}}
	}
	computed := func(d string) schema.StringAttribute {
		return schema.StringAttribute{Optional: true, Computed: true, MarkdownDescription: d}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Stowage's controller in the cluster: its CRDs (NodePool, NodeClass, NodeClaim), the CapacityBuffer CRD " +
			"(`autoscaling.x-k8s.io`) when the cluster lacks it (labelled `stowage.dev/installed-by: stowage_controller`; one that " +
			"Cluster Autoscaler or Karpenter installed is left to them, neither changed nor deleted), its namespace, " +
			"service account, RBAC, the Deployment (2 replicas electing a leader, spread over zones and hosts, non-root with a " +
			"read-only root filesystem), its PodDisruptionBudget and its metrics Service: the project's own manifests, applied " +
			"with server-side apply (field manager `terraform-provider-stowage`), the settings below written into them. Read back " +
			"for drift (an object missing or changed by hand shows in `revision`). Destroying it deletes the CRDs, then the rest; " +
			"while NodeClaims exist it refuses, unless `destroy_node_claims` lets it delete them and wait for the controller to " +
			"drain their nodes and terminate their instances. Other stowage resources that need the CRDs take `depends_on` on it.",
		Attributes: map[string]schema.Attribute{
			"id":               schema.StringAttribute{Computed: true, MarkdownDescription: "The namespace.", PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"cluster_name":     schema.StringAttribute{Required: true, MarkdownDescription: "Name of the EKS cluster (`--cluster-name`): instances are tagged `kubernetes.io/cluster/<name>`."},
			"cluster_endpoint": schema.StringAttribute{Required: true, MarkdownDescription: "The API server's https URL, which nodes join (`--cluster-endpoint`)."},
			"cluster_ca_bundle": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(""),
				MarkdownDescription: "The API server's CA, base64 PEM, for nodes' bootstrap; empty takes the pod's service account CA."},
			"cluster_cidr": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(""),
				MarkdownDescription: "The cluster's service CIDR (`--cluster-cidr`; `kubernetesNetworkConfig.serviceIpv4Cidr`, or " +
					"`serviceIpv6Cidr` on an IPv6 cluster): nodes derive their cluster DNS from it (10.100.0.0/16 gives 10.100.0.10). " +
					"Empty: the controller reads it from `eks:DescribeCluster` when it starts, and refuses to start without it."},
			"region":            computed("AWS region of the cluster; the provider's `aws_region` when unset."),
			"image":             computed(imageDescription),
			"image_pull_policy": str("Pull policy of the image: `Always`, `IfNotPresent` or `Never`; the cluster's default when unset."),
			"role_arn": str("ARN of the controller's IAM role for IRSA (`stowage_controller_role.arn`), annotated on the service " +
				"account; leave it unset with EKS Pod Identity."),
			"replicas": schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(2),
				MarkdownDescription: "Replicas; one leads, the others wait warm. 2 by default."},
			"log_level":  schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("info"), MarkdownDescription: "trace, debug, info, warn or error."},
			"log_format": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("json"), MarkdownDescription: "json or text."},
			"settings": schema.MapAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "More `stowage run` " +
				"flags, by name without the dashes (`batch-idle-duration = \"2s\"`, `preferences = \"respect\"`); `stowage run -h` lists them. " +
				"Checked at plan time as the controller would read them."},
			"cpu_request":    str("CPU request of the controller's container; the manifests' 500m when unset."),
			"memory_request": str("Memory request; the manifests' 512Mi when unset."),
			"memory_limit":   str("Memory limit; the manifests' 1Gi when unset."),
			"destroy_node_claims": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				MarkdownDescription: "Lets a destroy delete the remaining NodeClaims, and wait for the controller to drain and " +
					"terminate them, before it removes the controller. Without it a destroy with NodeClaims left is refused."},
			"namespace": named(deploy.Namespace, "The controller's namespace, `"+deploy.Namespace+"` by default: created with the "+
				"controller and deleted with it, so one of its own (not `default` or a `kube-` namespace). Changing it reinstalls the controller."),
			"service_account": named(deploy.ServiceAccount, "The controller's service account, `"+deploy.ServiceAccount+"` by default, "+
				"which the IAM role trusts (`stowage_controller_role`'s `namespace` and `service_account` name the same)."),
			"revision": schema.StringAttribute{Computed: true, MarkdownDescription: "A hash of the objects as applied; `drifted: ...` " +
				"naming the objects when the cluster no longer holds them so, which the next apply restores."},
		},
	}
}

func (r *controllerResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if req.ProviderData == nil {
		return
	}
	var b awsBase
	b.configure(req.ProviderData, &resp.Diagnostics)
	r.access = b.access
}

// settings reads the model's settings, with the defaults of the provider.
func (r *controllerResource) settings(ctx context.Context, m controllerModel, diags *diag.Diagnostics) controllerSettings {
	s := controllerSettings{ClusterName: m.ClusterName.ValueString(), ClusterEndpoint: m.ClusterEndpoint.ValueString(),
		ClusterCABundle: m.ClusterCABundle.ValueString(), ClusterCIDR: m.ClusterCIDR.ValueString(), Region: m.Region.ValueString(), Image: m.Image.ValueString(),
		ImagePullPolicy: m.ImagePullPolicy.ValueString(), RoleARN: m.RoleARN.ValueString(), LogLevel: m.LogLevel.ValueString(),
		LogFormat: m.LogFormat.ValueString(), Replicas: int32(m.Replicas.ValueInt64()), //nolint:gosec // validated small
		Flags: stringMap(ctx, m.Settings, diags), CPURequest: m.CPURequest.ValueString(), MemoryRequest: m.MemoryRequest.ValueString(),
		MemoryLimit: m.MemoryLimit.ValueString(), Namespace: m.Namespace.ValueString(), ServiceAccount: m.ServiceAccount.ValueString()}
	if s.Region == "" && r.access != nil {
		s.Region = r.access.cfg.AWS.Region
	}
	return s
}

func (r *controllerResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m controllerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || !knownConfig(m) {
		return
	}
	s := r.settings(ctx, m, &resp.Diagnostics)
	s.defaults()
	for attr, msg := range s.validate() {
		if attr == "region" && s.Region == "" {
			continue // the provider's aws_region may give it: ModifyPlan checks, with the provider configured
		}
		resp.Diagnostics.AddAttributeError(path.Root(attr), "Invalid "+attr, msg)
	}
	if p := m.ImagePullPolicy.ValueString(); p != "" && p != "Always" && p != "IfNotPresent" && p != "Never" {
		resp.Diagnostics.AddAttributeError(path.Root("image_pull_policy"), "Invalid image_pull_policy", p+" is not Always, IfNotPresent or Never")
	}
	if n := m.Replicas; !n.IsNull() && (n.ValueInt64() < 1 || n.ValueInt64() > 10) {
		resp.Diagnostics.AddAttributeError(path.Root("replicas"), "Invalid replicas", "use 1 to 10 (2 keeps a warm standby; the PDB keeps 1 through drains)")
	}
	if a := m.RoleARN.ValueString(); a != "" && (!strings.HasPrefix(a, "arn:aws") || !strings.Contains(a, ":role/")) {
		resp.Diagnostics.AddAttributeError(path.Root("role_arn"), "Invalid role_arn", a+" is not an IAM role ARN: use stowage_controller_role.arn")
	}
}

// defaults fills what validation needs and the manifests would supply.
func (s *controllerSettings) defaults() {
	if s.LogLevel == "" {
		s.LogLevel = "info"
	}
	if s.LogFormat == "" {
		s.LogFormat = "json"
	}
	if s.Replicas == 0 {
		s.Replicas = 2
	}
}

// knownConfig reports whether every setting is known (not waiting on apply).
func knownConfig(m controllerModel) bool {
	for _, v := range []interface{ IsUnknown() bool }{m.ClusterName, m.ClusterEndpoint, m.ClusterCABundle, m.ClusterCIDR, m.Region, m.Image,
		m.ImagePullPolicy, m.RoleARN, m.Replicas, m.LogLevel, m.LogFormat, m.Settings, m.CPURequest, m.MemoryRequest, m.MemoryLimit,
		m.Namespace, m.ServiceAccount} {
		if v.IsUnknown() {
			return false
		}
	}
	return true
}

// ModifyPlan fills the region and the image, and plans the revision of the
// objects the settings make: a change of revision (or a drifted one) is an
// update.
func (r *controllerResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var m controllerModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	m.ID = m.Namespace
	// Unset in the configuration, region and image take their defaults, not
	// the state's: a value changed in the cluster is changed back.
	var region, image types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("region"), &region)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("image"), &image)...)
	if region.IsNull() && r.access != nil && r.access.cfg.AWS.Region != "" {
		m.Region = types.StringValue(r.access.cfg.AWS.Region)
	}
	if image.IsNull() {
		img, release := r.imageFor()
		m.Image = types.StringValue(img)
		if !release {
			resp.Diagnostics.AddAttributeWarning(path.Root("image"), "Development build of the provider",
				fmt.Sprintf("this provider was not built by make release, so it deploys %s, the image `make image` builds "+
					"from this tree (bin/image), which no release publishes: push that image where the cluster pulls from and set "+
					"image to it, or use a released provider, whose default image is pinned by digest.", img))
		}
	}
	if m.Region.ValueString() == "" && !m.Region.IsUnknown() {
		resp.Diagnostics.AddAttributeError(path.Root("region"), "Missing region", "set region here, or aws_region in the provider block")
		return
	}
	m.Revision = types.StringUnknown()
	if knownConfig(m) {
		if objs, err := desiredObjects(r.settings(ctx, m, &resp.Diagnostics)); err == nil {
			m.Revision = types.StringValue(revision(objs))
		}
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &m)...)
}

var imageDescription = "The controller's image; by default `" + ControllerImage + ":v<provider version>@sha256:<digest>`, the image " +
	"`make release` built with this provider; a development build of the provider deploys the manifests' `" + ControllerImage +
	":dev` and warns at plan time."

// imageFor is the default image: this release's, or the manifests' for a
// development build (release false).
func (r *controllerResource) imageFor() (image string, release bool) {
	if r.access != nil {
		if img := defaultImage(r.access.version, r.access.imageDigest); img != "" {
			return img, true
		}
	}
	return manifestImage(), false
}
