package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/provider/internal/kube"
)

// driftWarning tells the plan's reader what a change does to running nodes.
type driftWarning struct{ summary, detail string }

// drift compares the template hash of the prior and planned objects, as the
// controller's drift detection does (v1alpha1.NodePoolHash, NodeClassHash on
// the object the API server stores, defaults included), and counts the
// NodeClaims whose recorded hash the planned object no longer matches.
func (k *kind) drift(ctx context.Context, c *kube.Client, prior, planned map[string]any) (*driftWarning, error) {
	before, err := k.hash(prior)
	if err != nil {
		return nil, err
	}
	after, err := k.hash(planned)
	if err != nil || before == after {
		return nil, err
	}
	name, _ := planned["metadata"].(map[string]any)["name"].(string)
	selector := ""
	if k == nodePoolKind {
		selector = v1alpha1.LabelNodePool + "=" + name
	}
	claims, err := c.NodeClaims(ctx, selector)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, nc := range claims {
		if k == nodeClassKind && (nc.Spec.NodeClassRef == nil || nc.Spec.NodeClassRef.Name != name) {
			continue
		}
		if recordedHashDiffers(nc, k.hashAnnotation(), after) {
			n++
		}
	}
	if n == 0 {
		return nil, nil
	}
	return k.driftMessage(name, n), nil
}

func (k *kind) driftMessage(name string, n int) *driftWarning {
	nodes := fmt.Sprintf("the %d nodes", n)
	if n == 1 {
		nodes = "the 1 node"
	}
	if k == nodePoolKind {
		return &driftWarning{
			summary: fmt.Sprintf("This change drifts %d nodes of pool %s", n, name),
			detail:  fmt.Sprintf("this change drifts %s of pool %s; they will be replaced within the pool's budgets", nodes, name),
		}
	}
	return &driftWarning{
		summary: fmt.Sprintf("This change drifts %d nodes of node class %s", n, name),
		detail:  fmt.Sprintf("this change drifts %s launched with node class %s; they will be replaced within their pools' budgets", nodes, name),
	}
}

// recordedHashDiffers reports whether a claim was launched under another
// template than want. A claim without a recorded hash, or recorded by another
// hash version, is not counted: the controller re-records rather than drifts it.
func recordedHashDiffers(nc v1alpha1.NodeClaim, annotation, want string) bool {
	got := nc.Annotations[annotation]
	if got == "" {
		return false
	}
	if v := nc.Annotations[v1alpha1.AnnotationHashVersion]; v != "" && v != v1alpha1.HashVersion {
		return false
	}
	return got != want
}

func (k *kind) hashAnnotation() string {
	if k == nodePoolKind {
		return v1alpha1.AnnotationNodePoolHash
	}
	return v1alpha1.AnnotationNodeClassHash
}

// hash digests an object as the API server would store it.
func (k *kind) hash(obj map[string]any) (string, error) {
	_, admission, err := k.load()
	if err != nil {
		return "", err
	}
	stored := runtime.DeepCopyJSON(obj)
	admission.Default(stored)
	if k == nodePoolKind {
		var np v1alpha1.NodePool
		if err := decodeTyped(stored, &np); err != nil {
			return "", fmt.Errorf("reading the planned NodePool: %w", err)
		}
		return v1alpha1.NodePoolHash(&np), nil
	}
	var nc v1alpha1.NodeClass
	if err := decodeTyped(stored, &nc); err != nil {
		return "", fmt.Errorf("reading the planned NodeClass: %w", err)
	}
	return v1alpha1.NodeClassHash(&nc), nil
}

// guardDestroy fails when the pool still has nodes and allow (the state's
// allow_destroy_with_nodes) is not true.
func (r *objectResource) guardDestroy(ctx context.Context, c *kube.Client, name string, allow tftypes.Value, diags *diag.Diagnostics) {
	var ok bool
	if allow.As(&ok) == nil && ok {
		return
	}
	claims, err := c.NodeClaims(ctx, v1alpha1.LabelNodePool+"="+name)
	if err != nil {
		diags.AddError("Counting the nodes of pool "+name, err.Error())
		return
	}
	if len(claims) == 0 {
		return
	}
	diags.AddAttributeError(path.Root("allow_destroy_with_nodes"), fmt.Sprintf("Pool %s still has %d nodes", name, len(claims)),
		fmt.Sprintf("deleting pool %s would drain and terminate its %d nodes. To do that, set allow_destroy_with_nodes = true "+
			"and apply, then destroy; or move its workloads to another pool first.", name, len(claims)))
}
