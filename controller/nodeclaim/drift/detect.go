package drift

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// Reasons of the Drifted condition this controller finds itself; the cloud's
// (cloudprovider.DriftImage, ...) are used as they are.
const (
	ReasonNodePoolDrifted     = "NodePoolDrifted"
	ReasonNodeClassDrifted    = "NodeClassDrifted"
	ReasonRequirementsDrifted = "RequirementsDrifted"
)

// drifted returns the first reason the claim has drifted and a message, or
// "" when it has not.
func (c *Controller) drifted(ctx context.Context, claim *v1alpha1.NodeClaim, pool *v1alpha1.NodePool) (reason, message string, err error) {
	current := claim.Annotations[v1alpha1.AnnotationHashVersion] == v1alpha1.HashVersion
	if h := claim.Annotations[v1alpha1.AnnotationNodePoolHash]; current && h != "" && h != v1alpha1.NodePoolHash(pool) {
		return ReasonNodePoolDrifted, "the template of nodepool " + pool.Name + " changed since the node was launched", nil
	}
	if reason, message, err := c.classDrifted(ctx, claim, current); err != nil || reason != "" {
		return reason, message, err
	}
	if message := UnmetRequirement(claim, pool); message != "" {
		return ReasonRequirementsDrifted, message, nil
	}
	why, err := c.cloud.IsDrifted(ctx, claim)
	if cloudprovider.IsNodeClaimNotFoundError(err) {
		return "", "", nil // the instance is gone; garbage collection and liveness see to it
	}
	if err != nil || why == "" {
		return "", "", err
	}
	return string(why), "the instance no longer matches what its nodeclass resolves to: " + string(why), nil
}

// classDrifted compares the NodeClass's hash with the one recorded at launch.
func (c *Controller) classDrifted(ctx context.Context, claim *v1alpha1.NodeClaim, current bool) (reason, message string, err error) {
	h := claim.Annotations[v1alpha1.AnnotationNodeClassHash]
	if !current || h == "" || claim.Spec.NodeClassRef == nil {
		return "", "", nil
	}
	class := &v1alpha1.NodeClass{}
	if err := c.kube.Get(ctx, client.ObjectKey{Name: claim.Spec.NodeClassRef.Name}, class); err != nil {
		return "", "", client.IgnoreNotFound(err)
	}
	if h != v1alpha1.NodeClassHash(class) {
		return ReasonNodeClassDrifted, "nodeclass " + class.Name + " changed since the node was launched", nil
	}
	return "", "", nil
}

// UnmetRequirement names a label of the claim that its pool's requirements
// no longer allow, or returns "". A label the claim does not carry is not
// judged: only a narrowed requirement drifts a node. The provider's plan
// counts the nodes a change drifts with it.
func UnmetRequirement(claim *v1alpha1.NodeClaim, pool *v1alpha1.NodePool) string {
	reqs := scheduling.FromAPI(pool.Spec.Template.Spec.Requirements)
	for _, key := range reqs.Keys() {
		value, ok := claim.Labels[key]
		if ok && !reqs.Get(key).Has(value) {
			return fmt.Sprintf("label %s=%s no longer meets nodepool %s's requirement %s", key, value, pool.Name, reqs.Get(key))
		}
	}
	return ""
}
