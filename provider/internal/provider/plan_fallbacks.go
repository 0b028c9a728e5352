package provider

import (
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
)

var fallbackType = map[string]attr.Type{
	"pod": types.StringType, "pods": types.Int64Type, "node_pool": types.StringType,
	"skipped_pool": types.StringType, "skipped_weight": types.Int64Type, "reason": types.StringType,
}

func fallbacksAttribute() schema.Attribute {
	s := func(d string) schema.Attribute { return schema.StringAttribute{Computed: true, MarkdownDescription: d} }
	n := func(d string) schema.Attribute { return schema.Int64Attribute{Computed: true, MarkdownDescription: d} }
	return schema.ListNestedAttribute{Computed: true, MarkdownDescription: "Why pods went to a pool while a pool of higher " +
		"weight exists (the solver tries pools by weight): one row per pod shape, pool it went to, and higher-weight pool it " +
		"passed over, with the reason that pool could not take them. The plan also prints each as a warning.",
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"pod": s("namespace/name of the pod shape."), "pods": n("Pods of the shape that went to `node_pool`."),
			"node_pool": s("Pool the pods went to."), "skipped_pool": s("Higher-weight pool passed over."),
			"skipped_weight": n("Weight of `skipped_pool`."), "reason": s("Why `skipped_pool` could not take the pods."),
		}}}
}

// fallbackRow is one row of the fallbacks attribute.
type fallbackRow struct {
	pod, pool, skipped, reason string
	pods, weight               int
}

// fallbackRows flattens the solver's fallbacks: a shape's pods carry the
// label app = its name.
func fallbackRows(r *scheduler.Results) []fallbackRow {
	var out []fallbackRow
	for _, f := range r.Fallbacks {
		p := f.Pods[0]
		shape := p.Namespace + "/" + p.Labels["app"]
		for _, s := range f.Skipped {
			out = append(out, fallbackRow{pod: shape, pool: f.NodePool, skipped: s.NodePool, reason: s.Reason, pods: len(f.Pods), weight: int(s.Weight)})
		}
	}
	return out
}

func fallbackList(rows []fallbackRow) (types.List, diag.Diagnostics) {
	var diags diag.Diagnostics
	elems := make([]attr.Value, 0, len(rows))
	for _, f := range rows {
		obj, d := types.ObjectValue(fallbackType, map[string]attr.Value{
			"pod": types.StringValue(f.pod), "pods": types.Int64Value(int64(f.pods)), "node_pool": types.StringValue(f.pool),
			"skipped_pool": types.StringValue(f.skipped), "skipped_weight": types.Int64Value(int64(f.weight)), "reason": types.StringValue(f.reason)})
		diags.Append(d...)
		elems = append(elems, obj)
	}
	l, d := types.ListValue(types.ObjectType{AttrTypes: fallbackType}, elems)
	diags.Append(d...)
	return l, diags
}

// fallbackWarnings puts the fallbacks in the plan's output: one warning per
// pool that took pods a higher-weight pool did not.
func fallbackWarnings(rows []fallbackRow) diag.Diagnostics {
	var diags diag.Diagnostics
	var pools []string
	byPool := map[string][]string{}
	pods := map[string]map[string]int{}
	for _, f := range rows {
		if _, ok := byPool[f.pool]; !ok {
			pools = append(pools, f.pool)
			pods[f.pool] = map[string]int{}
		}
		pods[f.pool][f.pod] = f.pods
		byPool[f.pool] = append(byPool[f.pool], fmt.Sprintf("%s (%d pods) not on %s (weight %d): %s", f.pod, f.pods, f.skipped, f.weight, f.reason))
	}
	for _, pool := range pools {
		n := 0
		for _, c := range pods[pool] {
			n += c
		}
		diags.AddWarning(fmt.Sprintf("%d pods fell back to pool %s", n, pool),
			fmt.Sprintf("stowage_plan placed %d pods on pool %s, below pools of higher weight: %s.", n, pool, strings.Join(byPool[pool], "; ")))
	}
	return diags
}
