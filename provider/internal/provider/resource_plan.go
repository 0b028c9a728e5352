package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/stowage-dev/stowage/provider/internal/crdschema"
	"github.com/stowage-dev/stowage/provider/internal/kube"
)

// ValidateConfig checks the configuration with the rules the API server and
// the API types apply, so that a bad pool fails `terraform plan` with the
// attribute named, without a cluster.
func (r *objectResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	root, _, err := r.kind.load()
	if err != nil {
		resp.Diagnostics.AddError("Building the schema", err.Error())
		return
	}
	d := r.decode(req.Config.Raw, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	for _, p := range r.kind.problems(ctx, d) {
		at, ok := root.AttributePath(p.Field)
		if !ok {
			resp.Diagnostics.AddError("Invalid "+r.kind.kind, p.Message)
			continue
		}
		resp.Diagnostics.AddAttributeError(at, "Invalid "+at.String(), p.Message)
	}
}

// ModifyPlan plans id; keeps the state's spelling of a duration or quantity
// the configuration writes otherwise; refuses to take over an object that
// exists, to rename or destroy a pool that still has nodes unless
// allow_destroy_with_nodes is set, and a node_class_ref to a NodeClass that
// exists nowhere; and warns about the nodes a change drifts.
func (r *objectResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		r.planDestroy(ctx, req, resp)
		return
	}
	var name types.String
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("name"), &name)...)
	if resp.Diagnostics.HasError() || name.IsUnknown() || r.access == nil {
		return
	}
	if key, _ := r.keyAndAdopt(req.Plan.Raw); !r.kind.namespaced {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("id"), name)...)
	} else if key.namespace != "" {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("id"), key.String())...)
	}
	if !req.State.Raw.IsNull() {
		r.keepEquivalentSpellings(req.State.Raw, resp)
	}
	if r.kind == nodeClassKind {
		r.access.planClass(name.ValueString())
	}
	c, err := r.access.Client(ctx)
	if r.kind == nodePoolKind {
		r.checkClassRef(ctx, c, err, resp.Plan.Raw, &resp.Diagnostics)
	}
	if err != nil {
		return // the checks below are advice or repeated at apply: without the cluster there is nothing to check
	}
	if req.State.Raw.IsNull() {
		r.refuseTakeover(ctx, c, resp.Plan.Raw, &resp.Diagnostics)
		return
	}
	if r.kind == nodePoolKind {
		r.planRename(ctx, c, req.State.Raw, resp)
	}
	if resp.Diagnostics.HasError() || resp.Plan.Raw.Equal(req.State.Raw) || !resp.Plan.Raw.IsFullyKnown() || r.kind.namespaced {
		return // a CapacityBuffer drifts no node
	}
	r.warnDrift(ctx, c, req.State.Raw, resp)
}

func (r *objectResource) warnDrift(ctx context.Context, c *kube.Client, state tftypes.Value, resp *resource.ModifyPlanResponse) {
	planned := r.decode(resp.Plan.Raw, &resp.Diagnostics)
	prior := r.decode(state, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	w, err := r.kind.drift(ctx, c, &lazyResolver{access: r.access, kube: c}, r.kind.object(prior.Object), r.kind.object(planned.Object))
	if err != nil {
		resp.Diagnostics.AddWarning("Counting the nodes this change drifts", err.Error())
		return
	}
	if w != nil {
		resp.Diagnostics.AddWarning(w.summary, w.detail)
	}
}

func (r *objectResource) planDestroy(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if r.kind != nodePoolKind || r.access == nil {
		return
	}
	c, err := r.access.Client(ctx)
	if err != nil {
		return // Delete checks again, with the cluster
	}
	d := r.decode(req.State.Raw, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	name, _ := d.Object["metadata"].(map[string]any)["name"].(string)
	r.guardDestroy(ctx, c, name, req.State.Raw, req.Private, &resp.Diagnostics)
}

// requireBlocks marks blocks the CRD requires with a validator naming the
// block; NewServer also makes them required in the schema Terraform reads.
func requireBlocks(root *crdschema.Node, blocks map[string]schema.Block) {
	for _, c := range root.Children {
		if !c.Required {
			continue
		}
		switch b := blocks[c.Name].(type) {
		case schema.SingleNestedBlock:
			b.Validators = append(b.Validators, requiredObject{})
			blocks[c.Name] = b
		case schema.ListNestedBlock:
			b.Validators = append(b.Validators, requiredList{})
			blocks[c.Name] = b
		}
	}
}

type requiredObject struct{}

func (requiredObject) Description(context.Context) string         { return "the block is required" }
func (requiredObject) MarkdownDescription(context.Context) string { return "the block is required" }
func (requiredObject) ValidateObject(_ context.Context, req validator.ObjectRequest, resp *validator.ObjectResponse) {
	if req.ConfigValue.IsNull() {
		resp.Diagnostics.AddAttributeError(req.Path, "Missing "+req.Path.String()+" block",
			fmt.Sprintf("add a %s { ... } block", req.Path))
	}
}

type requiredList struct{}

func (requiredList) Description(context.Context) string { return "at least one block is required" }
func (requiredList) MarkdownDescription(context.Context) string {
	return "at least one block is required"
}
func (requiredList) ValidateList(_ context.Context, req validator.ListRequest, resp *validator.ListResponse) {
	if !req.ConfigValue.IsUnknown() && len(req.ConfigValue.Elements()) == 0 {
		resp.Diagnostics.AddAttributeError(req.Path, "Missing "+req.Path.String()+" block",
			fmt.Sprintf("add at least one %s { ... } block", req.Path))
	}
}

// keepEquivalentSpellings plans the state's spelling of every duration and
// quantity the configuration spells otherwise (crdschema.Node.KeepEquivalent).
func (r *objectResource) keepEquivalentSpellings(state tftypes.Value, resp *resource.ModifyPlanResponse) {
	root, _, err := r.kind.load()
	if err != nil {
		return
	}
	if v, err := root.KeepEquivalent(resp.Plan.Raw, state); err == nil {
		resp.Plan.Raw = v
	}
}
