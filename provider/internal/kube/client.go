package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// FieldManager owns the fields the provider applies.
const FieldManager = "terraform-provider-stowage"

// ErrCRDMissing matches (errors.Is) every error about Stowage's CRDs not being installed.
var ErrCRDMissing = errors.New("stowage CRDs not installed")

// Client reads and writes Stowage's cluster-scoped objects.
type Client struct {
	dyn  dynamic.Interface
	disc discovery.DiscoveryInterface
}

// NewClient builds a client for cfg.
func NewClient(cfg *rest.Config) (*Client, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = FieldManager
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the Kubernetes client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the Kubernetes discovery client: %w", err)
	}
	return &Client{dyn: dyn, disc: disc}, nil
}

// Resource returns the GroupVersionResource of a Stowage kind's plural name.
func Resource(plural string) schema.GroupVersionResource {
	return v1alpha1.SchemeGroupVersion.WithResource(plural)
}

// Apply writes obj with server-side apply, taking ownership of its fields
// from any other manager, and returns the object the server holds.
func (c *Client) Apply(ctx context.Context, plural string, obj map[string]any) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{Object: obj}
	u.SetAPIVersion(v1alpha1.SchemeGroupVersion.String())
	out, err := c.dyn.Resource(Resource(plural)).Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if err != nil {
		return nil, c.explain(plural, fmt.Errorf("applying %s %s: %w", plural, u.GetName(), err))
	}
	return out, nil
}

// Get returns the object, or nil when it does not exist (or its CRD does not).
func (c *Client) Get(ctx context.Context, plural, name string) (*unstructured.Unstructured, error) {
	out, err := c.dyn.Resource(Resource(plural)).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", plural, name, err)
	}
	return out, nil
}

// Delete deletes the object; one already gone is not an error.
func (c *Client) Delete(ctx context.Context, plural, name string) error {
	err := c.dyn.Resource(Resource(plural)).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s %s: %w", plural, name, err)
	}
	return nil
}

// NodeClaims lists the NodeClaims, optionally filtered by a label selector;
// with the CRDs missing there are none.
func (c *Client) NodeClaims(ctx context.Context, selector string) ([]v1alpha1.NodeClaim, error) {
	list, err := c.dyn.Resource(Resource("nodeclaims")).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing NodeClaims: %w", err)
	}
	out := make([]v1alpha1.NodeClaim, 0, len(list.Items))
	for _, item := range list.Items {
		var nc v1alpha1.NodeClaim
		if err := fromUnstructured(item.Object, &nc); err != nil {
			return nil, fmt.Errorf("reading NodeClaim %s: %w", item.GetName(), err)
		}
		out = append(out, nc)
	}
	return out, nil
}

// explain turns the API server's answer to a write of a kind it does not
// serve into an error that says what to install.
func (c *Client) explain(plural string, err error) error {
	if !apierrors.IsNotFound(err) {
		return err
	}
	if _, derr := c.disc.ServerResourcesForGroupVersion(v1alpha1.SchemeGroupVersion.String()); derr == nil || !apierrors.IsNotFound(derr) {
		return err
	}
	return fmt.Errorf("%w: the cluster does not serve %s.%s; install Stowage's controller and CRDs first "+
		"(the stowage_controller resource, referenced by depends_on), then apply again", ErrCRDMissing, plural, v1alpha1.Group)
}

// Replace writes obj whole (an update at its resourceVersion), under the
// provider's field manager: every field it leaves out is removed, whichever
// manager owned it.
func (c *Client) Replace(ctx context.Context, plural string, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	out, err := c.dyn.Resource(Resource(plural)).Update(ctx, obj, metav1.UpdateOptions{FieldManager: FieldManager})
	if err != nil {
		return nil, fmt.Errorf("updating %s %s: %w", plural, obj.GetName(), err)
	}
	return out, nil
}

// KubernetesVersion is the API server's minor version, such as "1.37".
func (c *Client) KubernetesVersion() (string, error) {
	v, err := c.disc.ServerVersion()
	if err != nil {
		return "", fmt.Errorf("reading the cluster's Kubernetes version: %w", err)
	}
	return v.Major + "." + strings.TrimSuffix(v.Minor, "+"), nil
}

// Annotate sets one annotation of an object (a merge patch under the
// provider's field manager); an object that is gone is not an error.
func (c *Client) Annotate(ctx context.Context, plural, name, key, value string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{key: value}}})
	if err != nil {
		return err
	}
	_, err = c.dyn.Resource(Resource(plural)).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("annotating %s %s: %w", plural, name, err)
	}
	return nil
}
