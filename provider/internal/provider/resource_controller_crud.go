package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/stowage-dev/stowage/controller/deploy"
)

// manifestImage is the image controller/deploy's Deployment names.
func manifestImage() string {
	ms, err := deploy.Manifests()
	if err != nil {
		return ""
	}
	for _, m := range ms {
		if d, ok := m.Object.(*appsv1.Deployment); ok {
			return d.Spec.Template.Spec.Containers[0].Image
		}
	}
	return ""
}

func (r *controllerResource) installation(ctx context.Context, diags *diag.Diagnostics) (installation, bool) {
	if r.access == nil {
		diags.AddError("Provider not configured", "the stowage provider block was not configured; please report this issue to the provider developers")
		return installation{}, false
	}
	c, err := r.access.Client(ctx)
	if err != nil {
		diags.AddError("Reaching the cluster", err.Error())
		return installation{}, false
	}
	return installation{c: c}, true
}

func (r *controllerResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.write(ctx, req.Plan.Get, &resp.State, &resp.Diagnostics)
}

func (r *controllerResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.write(ctx, req.Plan.Get, &resp.State, &resp.Diagnostics)
}

// write applies the planned objects; on a failure part-way the state records
// a revision that says so, and the next plan applies again.
func (r *controllerResource) write(ctx context.Context, get func(context.Context, any) diag.Diagnostics, state interface {
	Set(context.Context, any) diag.Diagnostics
}, diags *diag.Diagnostics) {
	var m controllerModel
	diags.Append(get(ctx, &m)...)
	in, ok := r.installation(ctx, diags)
	if !ok || diags.HasError() {
		return
	}
	objs, err := desiredObjects(r.settings(ctx, m, diags))
	if err != nil {
		diags.AddError("Building the controller's manifests", err.Error())
		return
	}
	if err := in.apply(ctx, objs); err != nil {
		diags.AddError("Installing the controller", err.Error())
		m.Revision = types.StringValue(drifted + "the last apply failed part-way")
	} else {
		m.Revision = types.StringValue(revision(objs))
	}
	diags.Append(state.Set(ctx, &m)...)
}

// Read takes the settings back from the Deployment and the service account
// as the cluster holds them, and records in revision the objects that are
// missing or that an apply would change.
func (r *controllerResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m controllerModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	in, ok := r.installation(ctx, &resp.Diagnostics)
	if !ok || resp.Diagnostics.HasError() {
		return
	}
	if m.Namespace.IsNull() {
		m.Namespace = m.ID // imported by its namespace
	}
	live, err := r.readLive(ctx, in, &m, &resp.Diagnostics)
	if err != nil {
		resp.Diagnostics.AddError("Reading the controller", err.Error())
		return
	}
	if live["Deployment"] == nil && live["ServiceAccount"] == nil {
		resp.State.RemoveResource(ctx) // uninstalled
		return
	}
	if err := m.readBack(live["Deployment"], live["ServiceAccount"]); err != nil {
		resp.Diagnostics.AddError("Reading the controller's Deployment", err.Error())
		return
	}
	objs, err := desiredObjects(r.settings(ctx, m, &resp.Diagnostics))
	if err != nil {
		resp.Diagnostics.AddError("Building the controller's manifests", err.Error())
		return
	}
	missing, changed, err := in.drift(ctx, objs)
	if err != nil {
		resp.Diagnostics.AddError("Comparing the controller's objects with the cluster", err.Error())
		return
	}
	m.ID = m.Namespace
	if m.DestroyNodeClaims.IsNull() {
		m.DestroyNodeClaims = types.BoolValue(false)
	}
	m.Revision = types.StringValue(revision(objs))
	if len(missing)+len(changed) > 0 {
		m.Revision = types.StringValue(drifted + describeDrift(missing, changed))
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// readLive reads the Deployment and then the service account it runs as
// (which an import learns from it) as the cluster holds them, by kind; a
// missing object is absent from the map.
func (r *controllerResource) readLive(ctx context.Context, in installation, m *controllerModel, diags *diag.Diagnostics) (map[string]*unstructured.Unstructured, error) {
	live := map[string]*unstructured.Unstructured{}
	for _, kind := range []string{"Deployment", "ServiceAccount"} {
		objs, err := desiredObjects(r.settings(ctx, *m, diags))
		if err != nil {
			return nil, err
		}
		i := slices.IndexFunc(objs, func(o *unstructured.Unstructured) bool { return o.GetKind() == kind })
		got, err := in.c.GetObject(ctx, objs[i])
		if err != nil {
			return nil, err
		}
		if got == nil {
			continue
		}
		live[kind] = got
		if sa, _, _ := unstructured.NestedString(got.Object, "spec", "template", "spec", "serviceAccountName"); kind == "Deployment" && sa != "" {
			m.ServiceAccount = types.StringValue(sa)
		}
	}
	return live, nil
}

func describeDrift(missing, changed []string) string {
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "missing "+strings.Join(missing, ", "))
	}
	if len(changed) > 0 {
		parts = append(parts, "changed "+strings.Join(changed, ", "))
	}
	return strings.Join(parts, "; ")
}

// readBack takes the settings from the live Deployment and service account.
func (m *controllerModel) readBack(dep, sa *unstructured.Unstructured) error {
	if sa != nil {
		m.RoleARN = types.StringNull()
		if a := sa.GetAnnotations()[roleARNAnnotation]; a != "" {
			m.RoleARN = types.StringValue(a)
		}
	}
	if dep == nil {
		return nil
	}
	var d appsv1.Deployment
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(dep.Object, &d); err != nil {
		return err
	}
	if d.Spec.Replicas != nil {
		m.Replicas = types.Int64Value(int64(*d.Spec.Replicas))
	}
	if len(d.Spec.Template.Spec.Containers) == 0 {
		return fmt.Errorf("deployment %s has no container", d.Name)
	}
	c := d.Spec.Template.Spec.Containers[0]
	m.Image = types.StringValue(c.Image)
	m.readEnv(c.Env)
	m.readArgs(c.Args)
	m.readResources(c.Resources)
	return nil
}

func (m *controllerModel) readEnv(env []corev1.EnvVar) {
	into := map[string]*types.String{"CLUSTER_NAME": &m.ClusterName, "CLUSTER_ENDPOINT": &m.ClusterEndpoint,
		"CLUSTER_CA_BUNDLE": &m.ClusterCABundle, "CLUSTER_CIDR": &m.ClusterCIDR, "AWS_REGION": &m.Region, "LOG_LEVEL": &m.LogLevel, "LOG_FORMAT": &m.LogFormat}
	for _, e := range env {
		if p, ok := into[e.Name]; ok {
			*p = types.StringValue(e.Value)
		}
	}
}

func (m *controllerModel) readArgs(args []string) {
	flags := map[string]string{}
	for _, a := range args {
		if k, v, ok := strings.Cut(strings.TrimPrefix(a, "--"), "="); ok && strings.HasPrefix(a, "--") {
			flags[k] = v
		}
	}
	m.Settings = mapValue(flags, m.Settings)
}

// readResources keeps an attribute unset while the manifests' value stands.
func (m *controllerModel) readResources(rr corev1.ResourceRequirements) {
	read := func(attr *types.String, q string, manifest string) {
		if attr.IsNull() && q == manifest {
			return
		}
		*attr = types.StringValue(q)
	}
	defaults := manifestResources()
	read(&m.CPURequest, rr.Requests.Cpu().String(), defaults.Requests.Cpu().String())
	read(&m.MemoryRequest, rr.Requests.Memory().String(), defaults.Requests.Memory().String())
	read(&m.MemoryLimit, rr.Limits.Memory().String(), defaults.Limits.Memory().String())
}

func manifestResources() corev1.ResourceRequirements {
	ms, _ := deploy.Manifests()
	for _, m := range ms {
		if d, ok := m.Object.(*appsv1.Deployment); ok {
			return d.Spec.Template.Spec.Containers[0].Resources
		}
	}
	return corev1.ResourceRequirements{}
}

func (r *controllerResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m controllerModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	in, ok := r.installation(ctx, &resp.Diagnostics)
	if !ok || resp.Diagnostics.HasError() {
		return
	}
	if err := in.nodeClaimsGuard(ctx, m.DestroyNodeClaims.ValueBool()); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("destroy_node_claims"), "The controller still has nodes", err.Error())
		return
	}
	objs, err := desiredObjects(r.settings(ctx, m, &resp.Diagnostics))
	if err == nil {
		err = in.remove(ctx, objs)
	}
	if err != nil {
		resp.Diagnostics.AddError("Removing the controller", err.Error())
		return
	}
	// Its instances are gone with the NodeClaims: what it kept for reuse goes too.
	cfg, err := r.access.AWS(ctx)
	if err == nil {
		err = cleanupAWS(ctx, cfg, m.ClusterName.ValueString())
	}
	if err != nil {
		resp.Diagnostics.AddWarning("Deleting the controller's launch templates and instance profiles",
			err.Error()+"; delete those tagged for the cluster by hand (stowage.dev/cluster, kubernetes.io/cluster/<name>)")
	}
}

func (r *controllerResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if errs := validation.IsDNS1123Label(req.ID); len(errs) > 0 {
		resp.Diagnostics.AddError("Importing the controller", fmt.Sprintf("import it by its namespace, such as %s: %q is not one", deploy.Namespace, req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("namespace"), req.ID)...)
}
