package provider

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/nodeclaim/drift"
	"github.com/stowage-dev/stowage/provider/internal/kube"
)

// driftWarning tells the plan's reader what a change does to running nodes.
type driftWarning struct{ summary, detail string }

// driftCount is what a change drifts: the claims, once each, and one line
// per cause the controller's drift detection would act on.
type driftCount struct {
	claims map[string]bool
	causes []string
	// unchecked says why a cause could not be checked (the class's selectors
	// could not be resolved); "" when every cause was.
	unchecked string
}

func (d *driftCount) add(cause string, names []string) {
	if len(names) == 0 {
		return
	}
	for _, n := range names {
		d.claims[n] = true
	}
	d.causes = append(d.causes, fmt.Sprintf("%s %s", nodeCount(len(names)), cause))
}

// drift counts the nodes a change drifts by every check the controller's
// drift detection makes (controller/nodeclaim/drift): the template hash
// (v1alpha1.NodePoolHash, NodeClassHash on the object as the API server
// stores it, defaults included) against the one each NodeClaim recorded at
// launch; for a pool, the labels of its NodeClaims against the planned
// requirements (drift.UnmetRequirement); for a class whose selectors change,
// the images, subnets and security groups they resolve to through res
// against each node's (nil res: not checked, and the warning says so).
func (k *kind) drift(ctx context.Context, c *kube.Client, res classResolver, prior, planned map[string]any) (*driftWarning, error) {
	name, _ := planned["metadata"].(map[string]any)["name"].(string)
	claims, err := k.claimsOf(ctx, c, name)
	if err != nil || len(claims) == 0 {
		return nil, err
	}
	d := &driftCount{claims: map[string]bool{}}
	before, err := k.hash(prior)
	if err != nil {
		return nil, err
	}
	after, err := k.hash(planned)
	if err != nil {
		return nil, err
	}
	if before != after {
		var names []string
		for _, nc := range claims {
			if recordedHashDiffers(nc, k.hashAnnotation(), after) {
				names = append(names, nc.Name)
			}
		}
		d.add("launched under the old template ("+k.templateFields()+")", names)
	}
	if k == nodePoolKind {
		err = requirementDrift(d, claims, prior, planned)
	} else {
		err = resolutionDrift(ctx, d, res, claims, prior, planned)
	}
	if err != nil {
		return nil, err
	}
	return k.driftMessage(name, d), nil
}

func (k *kind) claimsOf(ctx context.Context, c *kube.Client, name string) ([]v1alpha1.NodeClaim, error) {
	if k == nodePoolKind {
		return c.NodeClaims(ctx, v1alpha1.LabelNodePool+"="+name)
	}
	all, err := c.NodeClaims(ctx, "")
	return slices.DeleteFunc(all, func(nc v1alpha1.NodeClaim) bool {
		return nc.Spec.NodeClassRef == nil || nc.Spec.NodeClassRef.Name != name
	}), err
}

func (k *kind) templateFields() string {
	if k == nodePoolKind {
		return "labels, annotations, taints, startup taints, node class, kubelet settings"
	}
	return "what a node fixes at launch: role, user data, disks, kubelet, metadata options, tags"
}

// requirementDrift finds the claims whose labels the prior requirements
// allowed and the planned ones do not.
func requirementDrift(d *driftCount, claims []v1alpha1.NodeClaim, prior, planned map[string]any) error {
	var was, will v1alpha1.NodePool
	if err := decodeStored(nodePoolKind, prior, &was); err != nil {
		return err
	}
	if err := decodeStored(nodePoolKind, planned, &will); err != nil {
		return err
	}
	if reflect.DeepEqual(was.Spec.Template.Spec.Requirements, will.Spec.Template.Spec.Requirements) {
		return nil
	}
	var names, why []string
	for i := range claims {
		msg := drift.UnmetRequirement(&claims[i], &will)
		if msg == "" || drift.UnmetRequirement(&claims[i], &was) != "" {
			continue // met, or drifted already
		}
		names = append(names, claims[i].Name)
		if len(why) < 3 {
			why = append(why, claims[i].Name+": "+msg)
		}
	}
	d.add("whose labels the new requirements no longer allow ("+strings.Join(why, "; ")+")", names)
	return nil
}

func (k *kind) driftMessage(name string, d *driftCount) *driftWarning {
	n := len(d.claims)
	if n == 0 && d.unchecked == "" {
		return nil
	}
	nodes := fmt.Sprintf("the %d nodes", n)
	if n == 1 {
		nodes = "the 1 node"
	}
	var w driftWarning
	if k == nodePoolKind {
		w = driftWarning{summary: fmt.Sprintf("This change drifts %d nodes of pool %s", n, name),
			detail: fmt.Sprintf("this change drifts %s of pool %s; they will be replaced within the pool's budgets.", nodes, name)}
	} else {
		w = driftWarning{summary: fmt.Sprintf("This change drifts %d nodes of node class %s", n, name),
			detail: fmt.Sprintf("this change drifts %s launched with node class %s; they will be replaced within their pools' budgets.", nodes, name)}
	}
	if len(d.causes) > 0 {
		w.detail += " Of them: " + strings.Join(d.causes, "; ") + "."
	}
	if d.unchecked != "" {
		if n == 0 {
			w.summary = "This change may drift the nodes of node class " + name
		}
		w.detail += " " + d.unchecked
	}
	return &w
}

func nodeCount(n int) string {
	if n == 1 {
		return "1 node"
	}
	return fmt.Sprintf("%d nodes", n)
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
	if k == nodePoolKind {
		var np v1alpha1.NodePool
		if err := decodeStored(k, obj, &np); err != nil {
			return "", err
		}
		return v1alpha1.NodePoolHash(&np), nil
	}
	var nc v1alpha1.NodeClass
	if err := decodeStored(k, obj, &nc); err != nil {
		return "", err
	}
	return v1alpha1.NodeClassHash(&nc), nil
}

// decodeStored decodes an object's JSON, with the API server's defaults, into its API type.
func decodeStored(k *kind, obj map[string]any, into any) error {
	_, admission, err := k.load()
	if err != nil {
		return err
	}
	stored := runtime.DeepCopyJSON(obj)
	admission.Default(stored)
	if err := decodeTyped(stored, into); err != nil {
		return fmt.Errorf("reading the planned %s: %w", k.kind, err)
	}
	return nil
}

// guardDestroy fails when the pool still has nodes and its destroy is not
// allowed (destroyAllowed).
func (r *objectResource) guardDestroy(ctx context.Context, c *kube.Client, name string, state tftypes.Value, private privateGetter, diags *diag.Diagnostics) {
	allowed, err := destroyAllowed(ctx, c, name, state, private)
	if err != nil {
		diags.AddError("Reading pool "+name, err.Error())
		return
	}
	if allowed {
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
