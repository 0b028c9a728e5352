package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/stowage-dev/stowage/provider/internal/kube"
)

// goneTimeout bounds the wait for an object being deleted (the old object of
// a replacement) before its successor of the same name is created.
const goneTimeout = 2 * time.Minute

// refuseTakeover fails the plan of a create whose object already exists in
// the cluster and was not written by this provider, unless adopt_existing is
// set: a create must never silently overwrite, and later destroy, what
// Terraform did not make. An object this provider wrote is left to Create to
// judge: it is the old half of a `terraform apply -replace`, or an object of
// a lost state, which Create refuses in turn.
func (r *objectResource) refuseTakeover(ctx context.Context, c *kube.Client, plan tftypes.Value, diags *diag.Diagnostics) {
	key, adopt := r.keyAndAdopt(plan)
	if adopt || key.name == "" || (r.kind.namespaced && key.namespace == "") {
		return
	}
	obj, err := r.kind.get(ctx, c, key)
	if err != nil || obj == nil || slices.Contains(managers(obj), kube.FieldManager) {
		return // without the cluster, Create checks
	}
	diags.AddAttributeError(path.Root("name"), fmt.Sprintf("%s %s already exists", r.kind.kind, key), r.takeoverDetail(obj))
}

// checkCreate runs before Create writes: an object of the name that is being
// deleted is waited for; one that stands is refused unless adopted.
func (r *objectResource) checkCreate(ctx context.Context, c *kube.Client, plan tftypes.Value, diags *diag.Diagnostics) {
	key, adopt := r.keyAndAdopt(plan)
	obj, err := r.kind.get(ctx, c, key)
	if err != nil {
		diags.AddError("Reading the "+r.kind.kind, err.Error())
		return
	}
	if obj == nil || adopt {
		return
	}
	if obj.GetDeletionTimestamp() == nil {
		diags.AddAttributeError(path.Root("name"), fmt.Sprintf("%s %s already exists", r.kind.kind, key), r.takeoverDetail(obj))
		return
	}
	err = wait.PollUntilContextTimeout(ctx, pollInterval, goneTimeout, true, func(ctx context.Context) (bool, error) {
		live, err := r.kind.get(ctx, c, key)
		return live == nil, err
	})
	if err != nil {
		diags.AddError(fmt.Sprintf("%s %s is still being deleted", r.kind.kind, key),
			fmt.Sprintf("waiting for the %s being deleted to be gone before creating its successor: %v", r.kind.kind, err))
	}
}

func (r *objectResource) takeoverDetail(obj *unstructured.Unstructured) string {
	name := keyOf(obj.Object).String()
	by := "another tool"
	if m := managers(obj); len(m) > 0 {
		by = strings.Join(m, ", ")
	}
	addr := "stowage_" + r.kind.typeName + ".<name>"
	return fmt.Sprintf("the cluster already has a %[1]s named %[2]s, written by %[3]s, not by this configuration: creating it "+
		"would overwrite its fields, and a later destroy would delete it. To manage it with Terraform as it is, import it "+
		"with an import block (Terraform 1.5 and later) and plan:\n\n"+
		"  import {\n    to = %[4]s\n    id = %[2]q\n  }\n\n"+
		"or with `terraform import %[4]s %[2]s`. To take it over with this configuration's fields instead, set "+
		"adopt_existing = true. Or give this %[1]s another name.", r.kind.kind, name, by, addr)
}

// keyAndAdopt reads namespace, name and adopt_existing from a planned value.
func (r *objectResource) keyAndAdopt(v tftypes.Value) (objectKey, bool) {
	name, adopt := r.nameAndAdopt(v)
	key := objectKey{name: name}
	var attrs map[string]tftypes.Value
	if r.kind.namespaced && v.As(&attrs) == nil {
		if ns, ok := attrs["namespace"]; ok && ns.IsKnown() && !ns.IsNull() {
			_ = ns.As(&key.namespace)
		}
	}
	return key, adopt
}

// nameAndAdopt reads name and adopt_existing from a planned value.
func (r *objectResource) nameAndAdopt(v tftypes.Value) (string, bool) {
	var attrs map[string]tftypes.Value
	if v.As(&attrs) != nil {
		return "", false
	}
	var name string
	if n, ok := attrs["name"]; ok && n.IsKnown() && !n.IsNull() {
		_ = n.As(&name)
	}
	var adopt bool
	_ = boolOr(v, "adopt_existing", false).As(&adopt)
	return name, adopt
}

// managers lists the field managers of an object, in order, once each.
func managers(obj *unstructured.Unstructured) []string {
	var out []string
	for _, mf := range obj.GetManagedFields() {
		if !slices.Contains(out, mf.Manager) {
			out = append(out, mf.Manager)
		}
	}
	return out
}
