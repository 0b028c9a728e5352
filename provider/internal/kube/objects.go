package kube

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// kindResources are the kinds the controller's manifests hold, and the
// CapacityBuffers stowage_capacity_buffer writes: kind -> resource and
// whether it is namespaced. The kinds are the project's own choice
// (controller/deploy, controller/apis/crds), so the table is fixed rather
// than discovered.
var kindResources = map[schema.GroupKind]struct {
	resource   string
	namespaced bool
}{
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: {"customresourcedefinitions", false},
	{Kind: "Namespace"}:                                              {"namespaces", false},
	{Kind: "ServiceAccount"}:                                         {"serviceaccounts", true},
	{Kind: "Service"}:                                                {"services", true},
	{Group: "apps", Kind: "Deployment"}:                              {"deployments", true},
	{Group: "policy", Kind: "PodDisruptionBudget"}:                   {"poddisruptionbudgets", true},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:        {"clusterroles", false},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: {"clusterrolebindings", false},
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:               {"roles", true},
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:        {"rolebindings", true},
	{Group: "autoscaling.x-k8s.io", Kind: "CapacityBuffer"}:          {"capacitybuffers", true},
}

// resourceFor is the client of an object's kind, in its namespace when it has one.
func (c *Client) resourceFor(obj *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := obj.GroupVersionKind()
	r, ok := kindResources[gvk.GroupKind()]
	if !ok {
		return nil, fmt.Errorf("kind %s is not one of the controller's manifests'", gvk.GroupKind())
	}
	nri := c.dyn.Resource(gvk.GroupVersion().WithResource(r.resource))
	if r.namespaced {
		return nri.Namespace(obj.GetNamespace()), nil
	}
	return nri, nil
}

// ObjectName names an object for messages: Kind namespace/name.
func ObjectName(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() != "" {
		return obj.GetKind() + " " + obj.GetNamespace() + "/" + obj.GetName()
	}
	return obj.GetKind() + " " + obj.GetName()
}

// ApplyObject writes obj with server-side apply under the provider's field
// manager; with dryRun the server only says what it would hold.
func (c *Client) ApplyObject(ctx context.Context, obj *unstructured.Unstructured, dryRun bool) (*unstructured.Unstructured, error) {
	ri, err := c.resourceFor(obj)
	if err != nil {
		return nil, err
	}
	opts := metav1.ApplyOptions{FieldManager: FieldManager, Force: true}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	out, err := ri.Apply(ctx, obj.GetName(), obj, opts)
	if err != nil {
		return nil, fmt.Errorf("applying %s: %w", ObjectName(obj), err)
	}
	return out, nil
}

// GetObject reads the object obj names; nil when it does not exist.
func (c *Client) GetObject(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	ri, err := c.resourceFor(obj)
	if err != nil {
		return nil, err
	}
	out, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", ObjectName(obj), err)
	}
	return out, nil
}

// ReplaceObject writes obj whole (an update at its resourceVersion) under
// the provider's field manager, as Replace does for Stowage's kinds.
func (c *Client) ReplaceObject(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	ri, err := c.resourceFor(obj)
	if err != nil {
		return nil, err
	}
	out, err := ri.Update(ctx, obj, metav1.UpdateOptions{FieldManager: FieldManager})
	if err != nil {
		return nil, fmt.Errorf("updating %s: %w", ObjectName(obj), err)
	}
	return out, nil
}

// DeleteObject deletes the object obj names, in the foreground (its
// dependents first); one already gone is not an error.
func (c *Client) DeleteObject(ctx context.Context, obj *unstructured.Unstructured) error {
	ri, err := c.resourceFor(obj)
	if err != nil {
		return err
	}
	fg := metav1.DeletePropagationForeground
	err = ri.Delete(ctx, obj.GetName(), metav1.DeleteOptions{PropagationPolicy: &fg})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s: %w", ObjectName(obj), err)
	}
	return nil
}

// DeleteNodeClaims deletes every NodeClaim the label selector matches (all
// of them when it is empty); the controller's finalizers then drain their
// nodes and terminate their instances.
func (c *Client) DeleteNodeClaims(ctx context.Context, selector string) error {
	err := c.dyn.Resource(Resource("nodeclaims")).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: selector})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the NodeClaims: %w", err)
	}
	return nil
}
