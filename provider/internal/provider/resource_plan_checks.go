package provider

import (
	"context"
	"fmt"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/provider/internal/kube"
)

// privateReplaces holds, in the planned private state of a replacement
// allowed to drop the old pool's nodes, the old pool's name (a JSON string);
// Terraform hands it to the old pool's Delete (without create_before_destroy).
const privateReplaces = "replaces"

// annotationReplacedBy marks, at plan time, a pool that a rename allowed to
// go with its nodes, with the new pool's name. With create_before_destroy
// the old pool is destroyed as a deposed object, planned from its own state
// (whose allow_destroy_with_nodes is the old one) and without the
// replacement's private state: the mark, and the new pool existing, allow it.
const annotationReplacedBy = v1alpha1.Group + "/terraform-replaced-by"

// planRename checks a pool's rename, which replaces it: while the old pool
// has nodes, it needs allow_destroy_with_nodes in the same change, and the
// plan says so rather than the apply failing halfway.
func (r *objectResource) planRename(ctx context.Context, c *kube.Client, state tftypes.Value, resp *resource.ModifyPlanResponse) {
	from, _ := r.nameAndAdopt(state)
	to, _ := r.nameAndAdopt(resp.Plan.Raw)
	if from == "" || to == "" || from == to {
		return
	}
	claims, err := c.NodeClaims(ctx, v1alpha1.LabelNodePool+"="+from)
	if err != nil || len(claims) == 0 {
		return
	}
	allow := boolOr(resp.Plan.Raw, "allow_destroy_with_nodes", false)
	var ok bool
	if !allow.IsKnown() || allow.As(&ok) != nil {
		return
	}
	cbd := fmt.Sprintf("Add lifecycle { create_before_destroy = true } to the resource so that pool %s exists before pool %s's "+
		"nodes drain; without it pool %s goes first and all its pods are Pending until pool %s launches for them.", to, from, from, to)
	if !ok {
		resp.Diagnostics.AddAttributeError(path.Root("allow_destroy_with_nodes"),
			fmt.Sprintf("Renaming pool %s to %s replaces it, and it still has %s", from, to, nodeCount(len(claims))),
			fmt.Sprintf("the rename deletes pool %s, and its %s would be drained and terminated. To do that, set "+
				"allow_destroy_with_nodes = true in the same change (it takes effect in this apply). %s", from, nodeCount(len(claims)), cbd))
		return
	}
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateReplaces, []byte(strconv.Quote(from)))...)
	if err := c.Annotate(ctx, nodePoolKind.plural, from, annotationReplacedBy, to); err != nil {
		resp.Diagnostics.AddWarning("Marking pool "+from+" as replaced", err.Error()+"; with create_before_destroy, its destroy "+
			"will need allow_destroy_with_nodes applied to it first")
	}
	resp.Diagnostics.AddWarning(fmt.Sprintf("Renaming pool %s to %s drains its %s", from, to, nodeCount(len(claims))),
		fmt.Sprintf("the rename replaces the pool: pool %s is deleted and its %s drained and terminated. %s", from, nodeCount(len(claims)), cbd))
}

// privateGetter reads a private state (the framework's privatestate.ProviderData).
type privateGetter interface {
	GetKey(context.Context, string) ([]byte, diag.Diagnostics)
}

// replacedPool is the old pool's name a replacing plan recorded, or "".
func replacedPool(ctx context.Context, private privateGetter) string {
	if private == nil {
		return ""
	}
	raw, _ := private.GetKey(ctx, privateReplaces)
	name, err := strconv.Unquote(string(raw))
	if err != nil {
		return ""
	}
	return name
}

// destroyAllowed reports whether pool name may go with its nodes: its
// state's allow_destroy_with_nodes, the replacement's private state (for
// Delete), or the mark a rename's plan left on it, once the pool that
// replaces it exists.
func destroyAllowed(ctx context.Context, c *kube.Client, name string, state tftypes.Value, private privateGetter) (bool, error) {
	var ok bool
	if boolOr(state, "allow_destroy_with_nodes", false).As(&ok) == nil && ok {
		return true, nil
	}
	if replacedPool(ctx, private) == name {
		return true, nil
	}
	obj, err := c.Get(ctx, nodePoolKind.plural, name)
	by := ""
	if obj != nil {
		by = obj.GetAnnotations()[annotationReplacedBy]
	}
	if err != nil || by == "" {
		return false, err
	}
	successor, err := c.Get(ctx, nodePoolKind.plural, by)
	return successor != nil, err
}

// checkClassRef fails the plan of a pool whose node_class_ref names a
// NodeClass that neither this plan nor the cluster has (the controller would
// leave the pool NodeClassNotFound), and warns when the cluster cannot be
// reached to tell (reachErr).
func (r *objectResource) checkClassRef(ctx context.Context, c *kube.Client, reachErr error, plan tftypes.Value, diags *diag.Diagnostics) {
	name := classRefName(plan)
	if name == "" || r.access.classPlanned(name) {
		return
	}
	at := path.Root("node_class_ref").AtName("name")
	if reachErr != nil {
		diags.AddAttributeWarning(at, "Could not check that NodeClass "+name+" exists",
			fmt.Sprintf("the cluster cannot be reached at plan time (%v). If NodeClass %s exists neither in this configuration nor "+
				"in the cluster, the pool will not launch: the apply fails with its NodeClassNotFound condition.", reachErr, name))
		return
	}
	obj, err := c.Get(ctx, nodeClassKind.plural, name)
	switch {
	case err != nil:
		diags.AddAttributeWarning(at, "Could not check that NodeClass "+name+" exists", err.Error())
	case obj == nil:
		diags.AddAttributeError(at, fmt.Sprintf("NodeClass %s does not exist", name),
			fmt.Sprintf("neither this configuration nor the cluster has a NodeClass named %s, so the pool could never launch "+
				"(the controller would mark it NodeClassNotFound). Declare it with a stowage_node_class and reference it, "+
				"node_class_ref { name = stowage_node_class.<name>.name }, so that Terraform plans it first; or fix the name.", name))
	}
}

// classRefName reads node_class_ref.name from a planned pool; "" when unset or unknown.
func classRefName(plan tftypes.Value) string {
	v, _, err := tftypes.WalkAttributePath(plan, tftypes.NewAttributePath().WithAttributeName("node_class_ref").WithAttributeName("name"))
	tv, ok := v.(tftypes.Value)
	if err != nil || !ok || !tv.IsKnown() || tv.IsNull() {
		return ""
	}
	var s string
	_ = tv.As(&s)
	return s
}
