package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/stowage-dev/stowage/provider/internal/crdschema"
	"github.com/stowage-dev/stowage/provider/internal/kube"
)

var (
	_ resource.ResourceWithConfigure      = (*objectResource)(nil)
	_ resource.ResourceWithImportState    = (*objectResource)(nil)
	_ resource.ResourceWithValidateConfig = (*objectResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*objectResource)(nil)
)

// objectResource serves one Stowage kind: its schema comes from the CRD, its
// writes are server-side applies of the configured fields.
type objectResource struct {
	kind   *kind
	access *clusterAccess
}

func newNodePoolResource() resource.Resource  { return &objectResource{kind: nodePoolKind} }
func newNodeClassResource() resource.Resource { return &objectResource{kind: nodeClassKind} }

func (r *objectResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + r.kind.typeName
}

func (r *objectResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	root, _, err := r.kind.load()
	if err != nil {
		resp.Diagnostics.AddError("Building the schema", err.Error())
		return
	}
	s, err := root.ResourceSchema(r.kind.description, r.ownAttributes())
	if err != nil {
		resp.Diagnostics.AddError("Building the schema", err.Error())
		return
	}
	requireBlocks(root, s.Blocks)
	resp.Schema = s
}

func (r *objectResource) ownAttributes() map[string]schema.Attribute {
	attrs := map[string]schema.Attribute{
		"id": schema.StringAttribute{Computed: true, MarkdownDescription: "The object's name."},
		"name": schema.StringAttribute{Required: true, MarkdownDescription: fmt.Sprintf("Name of the %s, a DNS subdomain "+
			"such as `web-spot`. Changing it replaces the %s.", r.kind.kind, r.kind.kind),
			PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}},
	}
	if r.kind.namespaced {
		attrs["id"] = schema.StringAttribute{Computed: true, MarkdownDescription: "The object's namespace/name."}
		attrs["namespace"] = schema.StringAttribute{Required: true, MarkdownDescription: fmt.Sprintf("Namespace of the %[1]s, "+
			"which must exist. Changing it replaces the %[1]s.", r.kind.kind),
			PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}}
	}
	attrs["adopt_existing"] = schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
		MarkdownDescription: fmt.Sprintf("Lets the create take over a %[1]s of the same name that already exists in the cluster "+
			"(made with kubectl, Helm or another Terraform state), overwriting its fields with this configuration's. Without it, "+
			"a create refuses such a %[1]s, at plan time when the cluster is reachable, and names the `import` block that "+
			"brings it under Terraform unchanged.", r.kind.kind)}
	if r.kind == nodePoolKind {
		attrs["allow_destroy_with_nodes"] = schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "Lets `terraform destroy`, removing the resource, or renaming the pool (which replaces it) delete " +
				"the pool while it still has nodes, which are then drained and terminated; it takes effect in the same apply that " +
				"sets it. Without it, such a plan fails, naming the nodes. With `lifecycle { create_before_destroy = true }` a " +
				"rename creates the new pool before the old one drains, so that the pods have somewhere to go."}
	}
	return attrs
}

func (r *objectResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if req.ProviderData == nil {
		return
	}
	access, ok := req.ProviderData.(*clusterAccess)
	if !ok {
		resp.Diagnostics.AddError("Unexpected provider data", fmt.Sprintf("got %T; please report this issue to the provider developers", req.ProviderData))
		return
	}
	r.access = access
}

func (r *objectResource) client(ctx context.Context, diags *diag.Diagnostics) *kube.Client {
	if r.access == nil {
		diags.AddError("Provider not configured", "the stowage provider block was not configured; please report this issue to the provider developers")
		return nil
	}
	c, err := r.access.Client(ctx)
	if err != nil {
		diags.AddError("Reaching the cluster", err.Error())
		return nil
	}
	return c
}

// decode converts a plan, state or config value into the object's JSON.
func (r *objectResource) decode(v tftypes.Value, diags *diag.Diagnostics) *crdschema.Decoded {
	root, _, err := r.kind.load()
	if err == nil {
		var d *crdschema.Decoded
		if d, err = root.ToJSON(v); err == nil {
			return d
		}
	}
	diags.AddError("Reading the configuration", err.Error())
	return nil
}

func (r *objectResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if c := r.client(ctx, &resp.Diagnostics); c != nil {
		r.checkCreate(ctx, c, req.Plan.Raw, &resp.Diagnostics)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	if r.apply(ctx, req.Plan.Raw, &resp.Diagnostics) {
		resp.State.Raw = req.Plan.Raw
	}
}

func (r *objectResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	if r.apply(ctx, req.Plan.Raw, &resp.Diagnostics) {
		resp.State.Raw = req.Plan.Raw
	}
}

// apply writes the planned object: the configured fields, owned by the
// provider's field manager, with any other field removed (converge). It
// reports whether the object was written: a pool written whose NodeClass
// exists nowhere is an error, and its state is kept (Terraform taints it).
func (r *objectResource) apply(ctx context.Context, plan tftypes.Value, diags *diag.Diagnostics) bool {
	d := r.decode(plan, diags)
	c := r.client(ctx, diags)
	if diags.HasError() {
		return false
	}
	desired := r.kind.object(d.Object)
	applied, err := r.kind.apply(ctx, c, runtime.DeepCopyJSON(desired))
	if err == nil {
		err = r.converge(ctx, c, desired, applied)
	}
	if err != nil {
		summary := "Applying the " + r.kind.kind
		if errors.Is(err, kube.ErrCRDMissing) {
			summary = "Stowage is not installed in the cluster"
		}
		diags.AddError(summary, err.Error())
		return false
	}
	if r.kind == nodePoolKind {
		if err := awaitClass(ctx, c, applied.GetName(), classRefName(plan)); err != nil {
			diags.AddAttributeError(path.Root("node_class_ref").AtName("name"), "Pool "+applied.GetName()+" is not Ready", err.Error())
		}
	}
	return true
}

func (r *objectResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	root, admission, err := r.kind.load()
	if err != nil {
		resp.Diagnostics.AddError("Building the schema", err.Error())
		return
	}
	prior := r.decode(req.State.Raw, &resp.Diagnostics)
	c := r.client(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	key := keyOf(prior.Object)
	obj, err := r.kind.get(ctx, c, key)
	if err != nil {
		resp.Diagnostics.AddError("Reading the "+r.kind.kind, err.Error())
		return
	}
	if obj == nil {
		resp.State.RemoveResource(ctx)
		return
	}
	// An imported state holds the name alone: keep what a field manager wrote.
	if _, read := prior.Object["spec"]; read {
		admission.Prune(root, obj.Object, prior.Object)
	} else {
		admission.PruneImported(root, obj.Object, writtenFields(obj))
	}
	extra := map[string]tftypes.Value{"id": tftypes.NewValue(tftypes.String, key.String())}
	for _, own := range r.kind.own {
		extra[own.Name] = boolOr(req.State.Raw, own.Name, false)
	}
	state, err := root.FromJSON(obj.Object, extra)
	if err != nil {
		resp.Diagnostics.AddError("Reading the "+r.kind.kind, err.Error())
		return
	}
	resp.State.Raw = state
}

func (r *objectResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	d := r.decode(req.State.Raw, &resp.Diagnostics)
	c := r.client(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if r.kind.namespaced { // nothing runs on a CapacityBuffer: it goes at once
		if err := r.kind.remove(ctx, c, keyOf(d.Object)); err != nil {
			resp.Diagnostics.AddError("Deleting the "+r.kind.kind, err.Error())
		}
		return
	}
	name, _ := d.Object["metadata"].(map[string]any)["name"].(string)
	if r.kind == nodePoolKind {
		r.guardDestroy(ctx, c, name, req.State.Raw, req.Private, &resp.Diagnostics)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	// The old half of a rename without create_before_destroy does not wait
	// for its nodes: its successor is created next, and the pods need it.
	wait := replacedPool(ctx, req.Private) != name
	if err := r.deleteAndDrain(ctx, c, name, wait); err != nil {
		resp.Diagnostics.AddError("Deleting the "+r.kind.kind, err.Error())
	}
}

func (r *objectResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	name := req.ID
	if r.kind.namespaced {
		namespace, n, ok := strings.Cut(req.ID, "/")
		if !ok || namespace == "" || n == "" || strings.Contains(n, "/") {
			resp.Diagnostics.AddError("Invalid import id", fmt.Sprintf("%q: import a %s by namespace/name, e.g. inference/vllm-headroom", req.ID, r.kind.kind))
			return
		}
		name = n
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("namespace"), namespace)...)
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), name)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
}

// boolOr reads a top-level bool attribute of v, or def when it is absent.
func boolOr(v tftypes.Value, name string, def bool) tftypes.Value {
	var attrs map[string]tftypes.Value
	if v.IsNull() || v.As(&attrs) != nil {
		return tftypes.NewValue(tftypes.Bool, def)
	}
	a, ok := attrs[name]
	if !ok || a.IsNull() || !a.IsKnown() {
		return tftypes.NewValue(tftypes.Bool, def)
	}
	return a
}
