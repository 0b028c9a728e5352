package provider

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/snapshotfile"
)

type planModel struct {
	NodePools     types.Dynamic `tfsdk:"node_pools"`
	NodeClasses   types.Dynamic `tfsdk:"node_classes"`
	Pods          []podModel    `tfsdk:"pod"`
	Preferences   types.String  `tfsdk:"preferences"`
	Unavailable   types.List    `tfsdk:"unavailable"`
	Nodes         types.List    `tfsdk:"nodes"`
	CostPerHour   types.Float64 `tfsdk:"cost_per_hour"`
	NodeCount     types.Int64   `tfsdk:"node_count"`
	PodsPlaced    types.Int64   `tfsdk:"pods_placed"`
	Unschedulable types.List    `tfsdk:"unschedulable"`
	Fallbacks     types.List    `tfsdk:"fallbacks"`
	Summary       types.String  `tfsdk:"summary"`
}

func pathOf(name string) path.Path { return path.Root(name) }

func planSchema() schema.Schema {
	return schema.Schema{
		MarkdownDescription: "Runs Stowage's scheduling core (the `stowage schedule` decision) on the node pools and node classes of " +
			"this configuration and a declared workload, during `terraform plan`: the nodes it would launch by pool, instance type, " +
			"zone and capacity type, their cost per hour, and every pod it could not place, with the reason. Pass the resources " +
			"through a local (`locals { pools = [stowage_node_pool.web] }`, then `node_pools = local.pools`): their configured " +
			"values are known at plan time, so the data source is read during the plan. A `precondition` of an `output` (or of a resource) " +
			"that reads it fails the plan on its result; a `check` block only warns, and the plan succeeds. (A `postcondition` " +
			"in the data source's own `lifecycle` makes Terraform defer its read to apply.) Pods placed on a pool while a pool of higher weight exists are listed in `fallbacks`, and printed as " +
			"warnings, with why the higher-weight pool could not take them. (Terraform defers to apply a data source that references a managed resource with pending " +
			"changes directly, but not one that reads its planned values through a local.) Instance types and " +
			"prices come from the built-in catalogue (us-east-1, three zones).",
		Attributes: map[string]schema.Attribute{
			"node_pools": schema.DynamicAttribute{Required: true, MarkdownDescription: "The pools to plan with: a list of " +
				"`stowage_node_pool` resources (through a local, see above), or of objects with their attributes."},
			"node_classes": schema.DynamicAttribute{Optional: true, MarkdownDescription: "The node classes the pools name, a list " +
				"of `stowage_node_class` resources; their kubelet settings and root volume size shape the nodes. When unset the " +
				"catalogue's defaults apply."},
			"preferences": schema.StringAttribute{Optional: true, MarkdownDescription: "What to do with preferred node affinities " +
				"and ScheduleAnyway spreads: " + codeList(preferenceNames) + ". Defaults to `" + string(scheduler.DefaultPreferencePolicy) + "`, as for `stowage schedule`."},
			"unavailable": schema.ListAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "Offerings to " +
				"treat as short of capacity, `TYPE:ZONE` or `TYPE:ZONE:CAPACITY-TYPE` (as `stowage schedule --unavailable`)."},
			"nodes": schema.ListNestedAttribute{Computed: true, MarkdownDescription: "The nodes the plan launches, grouped by " +
				"pool, instance type, zone and capacity type, most expensive group first.", NestedObject: schema.NestedAttributeObject{Attributes: nodeGroupAttributes()}},
			"cost_per_hour": schema.Float64Attribute{Computed: true, MarkdownDescription: "Price of every node the plan launches, in US dollars per hour."},
			"node_count":    schema.Int64Attribute{Computed: true, MarkdownDescription: "Number of nodes the plan launches."},
			"pods_placed":   schema.Int64Attribute{Computed: true, MarkdownDescription: "Number of pods the plan places."},
			"unschedulable": schema.ListNestedAttribute{Computed: true, MarkdownDescription: "Pods no pool can take, with the reason.", NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{"pod": schema.StringAttribute{Computed: true, MarkdownDescription: "namespace/name of the pod."}, "reason": schema.StringAttribute{Computed: true, MarkdownDescription: "Why no pool can take it."}}}},
			"fallbacks":     fallbacksAttribute(),
			"summary":       schema.StringAttribute{Computed: true, MarkdownDescription: "The decision as a table, for an `output`."},
		},
		Blocks: map[string]schema.Block{"pod": podBlock()},
	}
}

func nodeGroupAttributes() map[string]schema.Attribute {
	s := func(d string) schema.Attribute { return schema.StringAttribute{Computed: true, MarkdownDescription: d} }
	return map[string]schema.Attribute{
		"node_pool":      s("Pool of the nodes."),
		"instance_type":  s("Instance type: the cheapest that fits, the first a launch tries."),
		"zone":           s("Zone of the cheapest offering."),
		"capacity_type":  s("`spot`, `on-demand` or `reserved`."),
		"count":          schema.Int64Attribute{Computed: true, MarkdownDescription: "Number of nodes."},
		"price_per_hour": schema.Float64Attribute{Computed: true, MarkdownDescription: "Price of one node, US dollars per hour."},
		"pods":           schema.Int64Attribute{Computed: true, MarkdownDescription: "Pods placed on these nodes."},
	}
}

var nodeGroupType = map[string]attr.Type{
	"node_pool": types.StringType, "instance_type": types.StringType, "zone": types.StringType, "capacity_type": types.StringType,
	"count": types.Int64Type, "price_per_hour": types.Float64Type, "pods": types.Int64Type,
}

var unschedulableType = map[string]attr.Type{"pod": types.StringType, "reason": types.StringType}

type nodeGroup struct {
	pool, instanceType, zone, capacityType string
	count, pods                            int
	price                                  float64
}

// setResults fills the computed attributes from a decision.
func (m *planModel) setResults(r *scheduler.Results) diag.Diagnostics {
	groups := groupNodes(r)
	var diags diag.Diagnostics
	nodes := make([]attr.Value, 0, len(groups))
	for _, g := range groups {
		obj, d := types.ObjectValue(nodeGroupType, map[string]attr.Value{
			"node_pool": types.StringValue(g.pool), "instance_type": types.StringValue(g.instanceType), "zone": types.StringValue(g.zone),
			"capacity_type": types.StringValue(g.capacityType), "count": types.Int64Value(int64(g.count)),
			"price_per_hour": types.Float64Value(g.price), "pods": types.Int64Value(int64(g.pods)),
		})
		diags.Append(d...)
		nodes = append(nodes, obj)
	}
	var d diag.Diagnostics
	m.Nodes, d = types.ListValue(types.ObjectType{AttrTypes: nodeGroupType}, nodes)
	diags.Append(d...)
	unsched := make([]attr.Value, 0, len(r.Unschedulable))
	for _, u := range r.Unschedulable {
		obj, d := types.ObjectValue(unschedulableType, map[string]attr.Value{
			"pod": types.StringValue(u.Pod.Namespace + "/" + u.Pod.Name), "reason": types.StringValue(u.Reason)})
		diags.Append(d...)
		unsched = append(unsched, obj)
	}
	m.Unschedulable, d = types.ListValue(types.ObjectType{AttrTypes: unschedulableType}, unsched)
	diags.Append(d...)
	rows := fallbackRows(r)
	m.Fallbacks, d = fallbackList(rows)
	diags.Append(d...)
	diags.Append(fallbackWarnings(rows)...)
	m.CostPerHour = types.Float64Value(roundCents(r.TotalPrice()))
	m.NodeCount = types.Int64Value(int64(len(r.NewNodeClaims)))
	m.PodsPlaced = types.Int64Value(int64(r.PodCount()))
	m.Summary = types.StringValue(summary(groups, rows, r))
	if m.Preferences.IsNull() {
		m.Preferences = types.StringValue(string(scheduler.DefaultPreferencePolicy))
	}
	return diags
}

// roundCents keeps the cost to a hundredth of a cent, so that the plan shows
// no floating-point noise.
func roundCents(v float64) float64 { return float64(int64(v*10000+0.5)) / 10000 }

func groupNodes(r *scheduler.Results) []*nodeGroup {
	byKey := map[[4]string]*nodeGroup{}
	var out []*nodeGroup
	for _, nc := range r.NewNodeClaims {
		key := [4]string{nc.NodePool, firstType(nc), nc.Offering.Zone, nc.Offering.CapacityType}
		g, ok := byKey[key]
		if !ok {
			g = &nodeGroup{pool: key[0], instanceType: key[1], zone: key[2], capacityType: key[3], price: nc.Price()}
			byKey[key] = g
			out = append(out, g)
		}
		g.count++
		g.pods += len(nc.Pods)
	}
	slices.SortStableFunc(out, func(a, b *nodeGroup) int {
		return cmp.Or(cmp.Compare(b.price*float64(b.count), a.price*float64(a.count)), cmp.Compare(a.pool, b.pool),
			cmp.Compare(a.instanceType, b.instanceType), cmp.Compare(a.zone, b.zone), cmp.Compare(a.capacityType, b.capacityType))
	})
	return out
}

func firstType(nc *scheduler.NewNodeClaim) string {
	if len(nc.InstanceTypes) == 0 {
		return ""
	}
	return nc.InstanceTypes[0].Name
}

func summary(groups []*nodeGroup, fallbacks []fallbackRow, r *scheduler.Results) string {
	var b strings.Builder
	for _, g := range groups {
		fmt.Fprintf(&b, "%d x %s %s %s in %s: $%.4f/h, %d pods\n", g.count, g.pool, g.instanceType, g.capacityType, g.zone, g.price*float64(g.count), g.pods)
	}
	for _, f := range fallbacks {
		fmt.Fprintf(&b, "fell back: %d %s pods on %s, not %s (weight %d): %s\n", f.pods, f.pod, f.pool, f.skipped, f.weight, f.reason)
	}
	for _, u := range r.Unschedulable {
		fmt.Fprintf(&b, "unschedulable %s/%s: %s\n", u.Pod.Namespace, u.Pod.Name, u.Reason)
	}
	fmt.Fprintf(&b, "%d nodes, $%.4f/hour; %d pods placed, %d unschedulable", len(r.NewNodeClaims), r.TotalPrice(), r.PodCount(), len(r.Unschedulable))
	return b.String()
}

func parseUnavailable(l types.List) ([]snapshotfile.Offering, error) {
	var out []snapshotfile.Offering
	for _, e := range l.Elements() {
		s, _ := e.(basetypes.StringValue)
		parts := strings.Split(s.ValueString(), ":")
		if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
			return nil, fmt.Errorf("%q: want TYPE:ZONE or TYPE:ZONE:CAPACITY-TYPE, e.g. g5.12xlarge:us-east-1a:on-demand", s.ValueString())
		}
		o := snapshotfile.Offering{InstanceType: parts[0], Zone: parts[1]}
		if len(parts) == 3 {
			if !slices.Contains(v1alpha1.CapacityTypes, parts[2]) {
				return nil, fmt.Errorf("%q: capacity type %q is not one of %s", s.ValueString(), parts[2], strings.Join(v1alpha1.CapacityTypes, ", "))
			}
			o.CapacityType = parts[2]
		}
		out = append(out, o)
	}
	return out, nil
}
