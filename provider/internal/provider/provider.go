// Package provider is Stowage's Terraform provider: node pools and node
// classes as resources, written with server-side apply and validated at plan
// time by the API types' own rules, and data sources that run the scheduling
// core (stowage_plan) and list the instance catalogue (stowage_instance_types).
package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// Address is the provider's source address.
const Address = "registry.terraform.io/stowage-dev/stowage"

var _ provider.Provider = (*Provider)(nil)

// Provider is the stowage provider.
type Provider struct {
	version, imageDigest string
}

// New returns a factory of the provider at the given version.
func New(version string) func() provider.Provider { return NewRelease(version, "") }

// NewRelease returns a factory of the provider at the given version, whose
// controller image is the index of that digest (sha256:...), as make release
// stamps it.
func NewRelease(version, imageDigest string) func() provider.Provider {
	return func() provider.Provider { return &Provider{version: version, imageDigest: imageDigest} }
}

// Metadata names the provider.
func (p *Provider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "stowage"
	resp.Version = p.version
}

// Schema describes the provider block.
func (p *Provider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Declares Stowage's capacity policy (node pools and node classes) and shows, in `terraform plan`, " +
			"what a policy costs and which nodes a change replaces; and deploys Stowage itself: the controller's least-privilege " +
			"IAM role, the node role, the interruption queue and its rules, and the controller in the cluster.\n\n" + accessDescription +
			"\n\nTo use a provider built from the repository (`make provider`), install it from the filesystem mirror it writes: " +
			"see the guide [Installing the provider you built](guides/provider-install.md).",
		Attributes: providerAttributes(),
	}
}

// Configure keeps the cluster settings; the cluster is reached only when a
// resource needs it, so that data sources work without one.
func (p *Provider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var m providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	access := newClusterAccess(m)
	access.version, access.imageDigest = p.version, p.imageDigest
	resp.ResourceData, resp.DataSourceData = access, access
}

// Resources lists the resources.
func (p *Provider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{newNodePoolResource, newNodeClassResource, newCapacityBufferResource, newNodeRoleResource, newControllerRoleResource, newControllerResource, newQueueResource, newHandlerResource, newSpotRoleResource}
}

// DataSources lists the data sources.
func (p *Provider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{newPlanDataSource, newInstanceTypesDataSource, newControllerPolicyDataSource}
}
