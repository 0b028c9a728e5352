package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/nodepool"
	"github.com/stowage-dev/stowage/provider/internal/kube"
)

// drainTimeout bounds how long a destroy waits for a pool's nodes to be
// drained and terminated (each drain is bounded by the pool's
// terminationGracePeriod and the PDBs of its pods).
var drainTimeout = 15 * time.Minute

// deleteAndDrain deletes the object and, with wait, returns once the nodes
// it leaves are gone, so that `terraform destroy` does not return, nor
// delete the NodeClass, while they drain. A pool is deleted and its
// NodeClaims with it (the garbage collector would delete them after their
// owner); the controller drains and terminates them. A class is deleted once
// no node names it: its nodes' claims being deleted are waited for, and live
// ones of a pool that stays are refused.
func (r *objectResource) deleteAndDrain(ctx context.Context, c *kube.Client, name string, wait bool) error {
	if r.kind == nodeClassKind {
		if err := waitClaims(ctx, c, name, func(nc v1alpha1.NodeClaim) bool { return refersTo(nc, name) }); err != nil {
			return err
		}
		return c.Delete(ctx, r.kind.plural, name)
	}
	if err := c.Delete(ctx, r.kind.plural, name); err != nil {
		return err
	}
	if err := c.DeleteNodeClaims(ctx, v1alpha1.LabelNodePool+"="+name); err != nil || !wait {
		return err
	}
	return waitClaims(ctx, c, name, func(nc v1alpha1.NodeClaim) bool { return nc.Labels[v1alpha1.LabelNodePool] == name })
}

func refersTo(nc v1alpha1.NodeClaim, class string) bool {
	return nc.Spec.NodeClassRef != nil && nc.Spec.NodeClassRef.Name == class
}

// waitClaims polls until no NodeClaim matches; a matching one that nothing
// deletes (no deletion timestamp) fails at once, naming its pool.
func waitClaims(ctx context.Context, c *kube.Client, name string, match func(v1alpha1.NodeClaim) bool) error {
	var left []string
	err := wait.PollUntilContextTimeout(ctx, pollInterval, drainTimeout, true, func(ctx context.Context) (bool, error) {
		all, err := c.NodeClaims(ctx, "")
		if err != nil {
			return false, err
		}
		left = left[:0]
		var live []string
		for _, nc := range all {
			if !match(nc) {
				continue
			}
			left = append(left, nc.Name)
			if nc.DeletionTimestamp == nil {
				live = append(live, nc.Name+" (pool "+nc.Labels[v1alpha1.LabelNodePool]+")")
			}
		}
		if len(live) > 0 {
			return false, fmt.Errorf("%s still has %s that nothing is deleting: %s; destroy or move their pools first",
				name, nodeCount(len(live)), strings.Join(slices.Sorted(slices.Values(live)), ", "))
		}
		return len(left) == 0, nil
	})
	if err != nil && len(left) > 0 {
		return fmt.Errorf("waiting for the %s of %s to be drained and terminated (%s): %w; is the controller running?",
			nodeCount(len(left)), name, strings.Join(left, ", "), err)
	}
	return err
}

// classTimeout bounds how long an apply waits, for a pool whose NodeClass
// does not exist, for the class to appear or the controller to say so.
var classTimeout = 30 * time.Second

// awaitClass returns nil when the pool's NodeClass exists. A configuration's
// classes are applied before the pools that reference them, so a class that
// is missing here exists nowhere: the pool cannot launch, and the error
// carries its Ready condition as the controller reports it.
func awaitClass(ctx context.Context, c *kube.Client, pool, class string) error {
	if class == "" {
		return nil
	}
	condition := ""
	err := wait.PollUntilContextTimeout(ctx, pollInterval, classTimeout, true, func(ctx context.Context) (bool, error) {
		if obj, err := c.Get(ctx, nodeClassKind.plural, class); err != nil || obj != nil {
			return obj != nil, err
		}
		np, err := c.Get(ctx, nodePoolKind.plural, pool)
		if err != nil || np == nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(np.Object, "status", "conditions")
		for _, raw := range conds {
			cond, _ := raw.(map[string]any)
			if cond["type"] == v1alpha1.ConditionReady && cond["status"] == "False" && cond["reason"] == nodepool.ReasonNodeClassNotFound {
				condition = fmt.Sprintf("Ready=False, reason %v: %v", cond["reason"], cond["message"])
				return true, nil
			}
		}
		return false, nil
	})
	if err == nil && condition == "" {
		return nil // the class appeared
	}
	if condition == "" {
		condition = fmt.Sprintf("NodeClass %q does not exist (no controller reported on the pool within %v)", class, classTimeout)
	}
	return fmt.Errorf("pool %s cannot launch: %s. Declare the NodeClass with a stowage_node_class and reference it, "+
		"node_class_ref { name = stowage_node_class.<name>.name }, or fix the name; then apply again", pool, condition)
}
