package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/snapshotfile"
)

var _ datasource.DataSource = (*planDataSource)(nil)

// planDataSource runs the scheduling core on the configuration's pools and a
// declared workload, during `terraform plan`.
type planDataSource struct{}

func newPlanDataSource() datasource.DataSource { return &planDataSource{} }

func (d *planDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_plan"
}

func (d *planDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = planSchema()
}

func (d *planDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m planModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	objs, err := planObjects(ctx, &m)
	if err != nil {
		resp.Diagnostics.AddError("Reading the plan's input", err.Error())
		return
	}
	unavailable, err := parseUnavailable(m.Unavailable)
	if err != nil {
		resp.Diagnostics.AddAttributeError(pathOf("unavailable"), "Invalid unavailable", err.Error())
		return
	}
	opts, err := solveOptions(m.Preferences.ValueString())
	if err != nil {
		resp.Diagnostics.AddAttributeError(pathOf("preferences"), "Invalid preferences", err.Error())
		return
	}
	snap := objs.Snapshot(snapshotfile.Options{Infos: catalogue.Builtin(), Defaults: catalogue.DefaultOptions(), Unavailable: unavailable})
	results := scheduler.Solve(snap, opts)
	resp.Diagnostics.Append(m.setResults(results)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// preferenceNames lists the solver's preference policies, in the order the docs show them.
var preferenceNames = func() []string {
	names := make([]string, len(scheduler.PreferencePolicies))
	for i, p := range scheduler.PreferencePolicies {
		names[i] = string(p)
	}
	return names
}()

// solveOptions takes the policy exactly as `stowage schedule --preferences`
// names it; unset means the solver's default, as for the command.
func solveOptions(policy string) (scheduler.Options, error) {
	if policy == "" {
		return scheduler.Options{Preferences: scheduler.DefaultPreferencePolicy, ExplainFallbacks: true}, nil
	}
	if !slices.Contains(preferenceNames, policy) {
		return scheduler.Options{}, fmt.Errorf("preferences %q is not one of %s", policy, strings.Join(preferenceNames, ", "))
	}
	return scheduler.Options{Preferences: scheduler.PreferencePolicy(policy), ExplainFallbacks: true}, nil
}

// planObjects decodes the pools and classes (resource objects, or objects
// with their attributes) and builds the workload's pods.
func planObjects(ctx context.Context, m *planModel) (*snapshotfile.Objects, error) {
	objs := &snapshotfile.Objects{}
	poolValues, err := dynamicElements(ctx, m.NodePools)
	if err != nil {
		return nil, fmt.Errorf("node_pools: %w", err)
	}
	for i, v := range poolValues {
		var np v1alpha1.NodePool
		if err := decodeObject(nodePoolKind, v, &np); err != nil {
			return nil, fmt.Errorf("node_pools[%d]: %w", i, err)
		}
		np.SetDefaults()
		objs.NodePools = append(objs.NodePools, &np)
	}
	classValues, err := dynamicElements(ctx, m.NodeClasses)
	if err != nil {
		return nil, fmt.Errorf("node_classes: %w", err)
	}
	for i, v := range classValues {
		var nc v1alpha1.NodeClass
		if err := decodeObject(nodeClassKind, v, &nc); err != nil {
			return nil, fmt.Errorf("node_classes[%d]: %w", i, err)
		}
		nc.SetDefaults()
		objs.NodeClasses = append(objs.NodeClasses, &nc)
	}
	if err := checkClassRefs(objs); err != nil {
		return nil, err
	}
	objs.Pods, err = workloadPods(m.Pods)
	return objs, err
}

func checkClassRefs(objs *snapshotfile.Objects) error {
	if len(objs.NodeClasses) == 0 {
		return nil
	}
	names := map[string]bool{}
	for _, nc := range objs.NodeClasses {
		names[nc.Name] = true
	}
	for _, np := range objs.NodePools {
		if ref := np.Spec.Template.Spec.NodeClassRef; ref != nil && !names[ref.Name] {
			return fmt.Errorf("node pool %s names node class %q, which is not in node_classes; add it or fix the name", np.Name, ref.Name)
		}
	}
	return nil
}

// dynamicElements returns the elements of a list, set or tuple value.
func dynamicElements(ctx context.Context, v types.Dynamic) ([]tftypes.Value, error) {
	if v.IsNull() || v.IsUnderlyingValueNull() {
		return nil, nil
	}
	raw, err := v.UnderlyingValue().ToTerraformValue(ctx)
	if err != nil {
		return nil, err
	}
	var elems []tftypes.Value
	if err := raw.As(&elems); err != nil {
		return nil, fmt.Errorf("want a list of objects, such as [stowage_node_pool.web]: %w", err)
	}
	return elems, nil
}

// decodeObject reads one pool or class with the resource's own mapping.
func decodeObject(k *kind, v tftypes.Value, into any) error {
	root, _, err := k.load()
	if err != nil {
		return err
	}
	d, err := root.ToJSON(v)
	if err != nil {
		return err
	}
	if len(d.Unknown) > 0 {
		return fmt.Errorf("%s is not known until apply", d.Unknown[0])
	}
	return decodeTyped(k.object(d.Object), into)
}
