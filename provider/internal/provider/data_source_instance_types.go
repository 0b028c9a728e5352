package provider

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/clock"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowageaws "github.com/stowage-dev/stowage/controller/aws"
	"github.com/stowage-dev/stowage/controller/aws/cache"
	"github.com/stowage-dev/stowage/controller/aws/capacityreservation"
	"github.com/stowage-dev/stowage/controller/aws/instancetype"
	"github.com/stowage-dev/stowage/controller/aws/pricing"
	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

var (
	_ datasource.DataSource              = (*instanceTypesDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*instanceTypesDataSource)(nil)
)

// instanceTypesDataSource lists the instance types a set of requirements allows.
type instanceTypesDataSource struct{ access *clusterAccess }

func newInstanceTypesDataSource() datasource.DataSource { return &instanceTypesDataSource{} }

// Catalogues the data source reads from.
const (
	catalogueBuiltin = "builtin"
	catalogueAWS     = "aws"
)

type instanceTypesModel struct {
	Requirements  []requirementModel `tfsdk:"requirement"`
	Catalogue     types.String       `tfsdk:"catalogue"`
	Zones         []string           `tfsdk:"zones"`
	InstanceTypes []instanceTypeInfo `tfsdk:"instance_types"`
}

type requirementModel struct {
	Key      string   `tfsdk:"key"`
	Operator string   `tfsdk:"operator"`
	Values   []string `tfsdk:"values"`
}

type instanceTypeInfo struct {
	Name           string   `tfsdk:"name"`
	Family         string   `tfsdk:"family"`
	Category       string   `tfsdk:"category"`
	Arch           string   `tfsdk:"arch"`
	VCPU           int64    `tfsdk:"vcpu"`
	MemoryMiB      int64    `tfsdk:"memory_mib"`
	GPUCount       int64    `tfsdk:"gpu_count"`
	GPUName        string   `tfsdk:"gpu_name"`
	MaxPods        int64    `tfsdk:"max_pods"`
	Zones          []string `tfsdk:"zones"`
	CapacityTypes  []string `tfsdk:"capacity_types"`
	OnDemandPrice  float64  `tfsdk:"on_demand_price"`
	CheapestPrice  float64  `tfsdk:"cheapest_price"`
	CheapestOffers string   `tfsdk:"cheapest_offering"`
}

func (d *instanceTypesDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_instance_types"
}

func (d *instanceTypesDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	if access, ok := req.ProviderData.(*clusterAccess); ok {
		d.access = access
	}
}

func (d *instanceTypesDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = instanceTypesSchema()
}

func (d *instanceTypesDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m instanceTypesModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	reqs := make([]v1alpha1.NodeSelectorRequirementWithMinValues, 0, len(m.Requirements))
	for _, r := range m.Requirements {
		reqs = append(reqs, v1alpha1.NodeSelectorRequirementWithMinValues{Key: r.Key, Operator: r.Operator, Values: r.Values})
	}
	for _, e := range v1alpha1.ValidateRequirements(field.NewPath("requirement"), reqs) {
		resp.Diagnostics.AddAttributeError(requirementPath(e.Field), "Invalid "+e.Field, e.ErrorBody())
	}
	if resp.Diagnostics.HasError() {
		return
	}
	types, err := d.catalogue(ctx, &m)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("catalogue"), "Reading the instance catalogue", err.Error())
		return
	}
	m.InstanceTypes = matching(types, scheduling.FromAPI(reqs))
	if m.Catalogue.IsNull() {
		m.Catalogue = typesString(catalogueBuiltin)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// requirementPath maps requirement[1].values[0] onto the attribute path.
func requirementPath(f string) path.Path {
	var i, j int
	if n, _ := fmt.Sscanf(f, "requirement[%d].values[%d]", &i, &j); n == 2 {
		return path.Root("requirement").AtListIndex(i).AtName("values").AtListIndex(j)
	}
	var name string
	if n, _ := fmt.Sscanf(f, "requirement[%d].%s", &i, &name); n == 2 {
		return path.Root("requirement").AtListIndex(i).AtName(name)
	}
	return path.Root("requirement")
}

func (d *instanceTypesDataSource) catalogue(ctx context.Context, m *instanceTypesModel) ([]*cloudprovider.InstanceType, error) {
	switch m.Catalogue.ValueString() {
	case "", catalogueBuiltin:
		opts := catalogue.DefaultOptions()
		if len(m.Zones) > 0 {
			opts.Zones = m.Zones
		}
		return catalogue.InstanceTypes(catalogue.Builtin(), opts), nil
	case catalogueAWS:
		if len(m.Zones) == 0 {
			return nil, fmt.Errorf("catalogue %q needs zones: list the availability zones to price, e.g. [\"us-east-1a\"]", catalogueAWS)
		}
		return d.liveCatalogue(ctx, m.Zones)
	}
	return nil, fmt.Errorf("catalogue %q is not %q or %q", m.Catalogue.ValueString(), catalogueBuiltin, catalogueAWS)
}

// liveCatalogue discovers types, offerings and prices through the controller's AWS layer.
func (d *instanceTypesDataSource) liveCatalogue(ctx context.Context, zones []string) ([]*cloudprovider.InstanceType, error) {
	if d.access == nil {
		return nil, fmt.Errorf("the provider is not configured")
	}
	cfg, err := d.access.cfg.AWS.LoadAWS(ctx)
	if err != nil {
		return nil, fmt.Errorf("catalogue %q reads the account's instance types and prices; %w; or use catalogue = %q, which needs no AWS access",
			catalogueAWS, err, catalogueBuiltin)
	}
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		return nil, fmt.Errorf("catalogue %q calls ec2:DescribeInstanceTypes, ec2:DescribeInstanceTypeOfferings, "+
			"ec2:DescribeSpotPriceHistory and pricing:GetProducts with the provider's AWS credentials, and found none: set "+
			"AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or aws_profile (a profile of the shared AWS configuration, SSO "+
			"included), or run where an IAM role is available (IRSA, EKS Pod Identity, an instance profile); or use "+
			"catalogue = %q, which needs none. The SDK said: %v", catalogueAWS, catalogueBuiltin, err)
	}
	c := stowageaws.ClientsFromConfig(cfg)
	clk, log := clock.RealClock{}, hclog.NewNullLogger()
	prices := pricing.NewProvider(c.EC2, c.Pricing, cfg.Region, clk, log)
	p := instancetype.NewProvider(c.EC2, prices, capacityreservation.NewProvider(c.EC2), cache.NewUnavailable(clk, cache.Backoff{}), cfg.Region, clk, log)
	return p.List(ctx, instancetype.Query{Zones: zones})
}

// matching lists the types whose labels meet reqs, with an available
// offering they allow, cheapest first.
func matching(all []*cloudprovider.InstanceType, reqs scheduling.Requirements) []instanceTypeInfo {
	out := []instanceTypeInfo{}
	for _, it := range all {
		if !it.Requirements.Intersects(reqs) {
			continue
		}
		cheapest := it.CheapestPrice(reqs)
		if math.IsInf(cheapest, 1) {
			continue
		}
		out = append(out, describe(it, reqs, cheapest))
	}
	slices.SortStableFunc(out, func(a, b instanceTypeInfo) int {
		return cmp.Or(cmp.Compare(a.CheapestPrice, b.CheapestPrice), cmp.Compare(a.Name, b.Name))
	})
	return out
}

func describe(it *cloudprovider.InstanceType, reqs scheduling.Requirements, cheapest float64) instanceTypeInfo {
	label := func(key string) string {
		if r := it.Requirements.Get(key); r != nil && len(r.Values()) > 0 {
			return r.Values()[0]
		}
		return ""
	}
	num := func(key string) int64 { n, _ := strconv.ParseInt(label(key), 10, 64); return n }
	info := instanceTypeInfo{Name: it.Name, Family: label(v1alpha1.LabelInstanceFamily), Category: label(v1alpha1.LabelInstanceCategory),
		Arch: label(corev1.LabelArchStable), VCPU: num(v1alpha1.LabelInstanceCPU), MemoryMiB: num(v1alpha1.LabelInstanceMemory),
		GPUCount: num(v1alpha1.LabelInstanceGPUCount), GPUName: label(v1alpha1.LabelInstanceGPUName),
		Zones: []string{}, CapacityTypes: []string{}, CheapestPrice: cheapest}
	info.MaxPods = it.Capacity.Get(corev1.ResourcePods)
	for _, o := range it.Offerings.Available().Compatible(reqs) {
		if !slices.Contains(info.Zones, o.Zone) {
			info.Zones = append(info.Zones, o.Zone)
		}
		if !slices.Contains(info.CapacityTypes, o.CapacityType) {
			info.CapacityTypes = append(info.CapacityTypes, o.CapacityType)
		}
		if o.CapacityType == v1alpha1.CapacityTypeOnDemand {
			info.OnDemandPrice = o.Price
		}
		if o.Price == cheapest && info.CheapestOffers == "" {
			info.CheapestOffers = o.CapacityType + " in " + o.Zone
		}
	}
	slices.Sort(info.Zones)
	slices.Sort(info.CapacityTypes)
	return info
}

func typesString(s string) types.String { return types.StringValue(s) }

func instanceTypesSchema() schema.Schema {
	str := func(d string) schema.Attribute { return schema.StringAttribute{Computed: true, MarkdownDescription: d} }
	num := func(d string) schema.Attribute { return schema.Int64Attribute{Computed: true, MarkdownDescription: d} }
	price := func(d string) schema.Attribute {
		return schema.Float64Attribute{Computed: true, MarkdownDescription: d}
	}
	list := func(d string) schema.Attribute {
		return schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: d}
	}
	return schema.Schema{
		MarkdownDescription: "The instance types a set of requirements allows, with their attributes and prices, cheapest first: " +
			"what a `stowage_node_pool` with these requirements could launch. From the built-in catalogue (us-east-1 prices), or " +
			"the live one through Stowage's AWS layer (DescribeInstanceTypes, offerings, the Pricing API and spot prices).",
		Attributes: map[string]schema.Attribute{
			"catalogue": schema.StringAttribute{Optional: true, MarkdownDescription: "Where the types come from: `builtin` " +
				"(the default, no AWS call) or `aws` (the provider's AWS settings; needs `zones`)."},
			"zones": schema.ListAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "Zones to offer " +
				"types in; the built-in catalogue defaults to us-east-1a, us-east-1b and us-east-1c."},
			"instance_types": schema.ListNestedAttribute{Computed: true, MarkdownDescription: "The matching types, cheapest first.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name": str("Instance type, such as m7i.large."), "family": str("Family, such as m7i."), "category": str("Category, such as m."),
					"arch": str("`amd64` or `arm64`."), "vcpu": num("vCPUs."), "memory_mib": num("Memory in MiB."),
					"gpu_count": num("GPUs."), "gpu_name": str("GPU model, when it has GPUs."), "max_pods": num("Pods a node of this type takes."),
					"zones": list("Zones with an offering the requirements allow."), "capacity_types": list("Capacity types offered."),
					"on_demand_price":   price("On-demand price, US dollars per hour; 0 when the requirements exclude on-demand."),
					"cheapest_price":    price("Price of the cheapest offering the requirements allow, US dollars per hour."),
					"cheapest_offering": str("Capacity type and zone of the cheapest offering."),
				}}},
		},
		Blocks: map[string]schema.Block{"requirement": schema.ListNestedBlock{
			MarkdownDescription: "A requirement, as in `stowage_node_pool`; every one must hold.",
			NestedObject: schema.NestedBlockObject{Attributes: map[string]schema.Attribute{
				"key":      schema.StringAttribute{Required: true, MarkdownDescription: "Node label, such as `stowage.dev/instance-family`."},
				"operator": schema.StringAttribute{Required: true, MarkdownDescription: "One of " + codeList(v1alpha1.Operators) + "."},
				"values":   schema.ListAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "Values of the label."},
			}},
		}},
	}
}
