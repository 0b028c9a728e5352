package provider

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	autoscalingcrd "github.com/stowage-dev/stowage/controller/apis/autoscaling/crd"
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/provider/internal/kube"
)

// Deadlines of the installation's waits.
const (
	establishTimeout = time.Minute     // CRDs to serve their kinds
	removeTimeout    = 5 * time.Minute // objects to be gone, the namespace's contents included
	pollInterval     = 500 * time.Millisecond
)

// installation is the controller's objects in one cluster.
type installation struct{ c *kube.Client }

// apply writes every object with server-side apply, in order, and waits for
// the CRDs to be established before the rest, so that the pools and classes
// of the same configuration can be applied right after.
func (in installation) apply(ctx context.Context, objs []*unstructured.Unstructured) error {
	var crdNames []*unstructured.Unstructured
	for _, o := range objs {
		if theirs, err := in.othersShared(ctx, o); err != nil || theirs {
			if err != nil {
				return err
			}
			continue
		}
		if o.GetKind() != "CustomResourceDefinition" && len(crdNames) > 0 {
			if err := in.waitEstablished(ctx, crdNames); err != nil {
				return err
			}
			crdNames = nil
		}
		if _, err := in.c.ApplyObject(ctx, o, false); err != nil {
			return err
		}
		if o.GetKind() == "CustomResourceDefinition" {
			crdNames = append(crdNames, o)
		}
	}
	return in.waitEstablished(ctx, crdNames)
}

func (in installation) waitEstablished(ctx context.Context, crds []*unstructured.Unstructured) error {
	for _, crd := range crds {
		err := wait.PollUntilContextTimeout(ctx, pollInterval, establishTimeout, true, func(ctx context.Context) (bool, error) {
			live, err := in.c.GetObject(ctx, crd)
			if err != nil || live == nil {
				return false, err
			}
			conds, _, _ := unstructured.NestedSlice(live.Object, "status", "conditions")
			for _, c := range conds {
				cm, _ := c.(map[string]any)
				if cm["type"] == "Established" && cm["status"] == "True" {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("waiting for %s to be established: %w", kube.ObjectName(crd), err)
		}
	}
	return nil
}

// drift names the objects that are missing, or that an apply would change:
// the server's answer to a dry-run apply differs from what it holds.
func (in installation) drift(ctx context.Context, objs []*unstructured.Unstructured) (missing, changed []string, err error) {
	for _, o := range objs {
		live, err := in.c.GetObject(ctx, o)
		if err != nil {
			return nil, nil, err
		}
		if live == nil {
			missing = append(missing, kube.ObjectName(o))
			continue
		}
		if shared(o) && !installedByUs(live) {
			continue // another owner's
		}
		would, err := in.c.ApplyObject(ctx, o, true)
		if err != nil {
			return nil, nil, err
		}
		if !reflect.DeepEqual(comparable(would), comparable(live)) {
			changed = append(changed, kube.ObjectName(o))
		}
	}
	return missing, changed, nil
}

// comparable drops what the server changes on every write and the status.
func comparable(u *unstructured.Unstructured) map[string]any {
	c := u.DeepCopy().Object
	delete(c, "status")
	for _, f := range []string{"resourceVersion", "managedFields", "generation", "uid", "creationTimestamp"} {
		unstructured.RemoveNestedField(c, "metadata", f)
	}
	return c
}

// nodeClaimsGuard refuses to remove the controller while NodeClaims exist
// that nothing is deleting, unless told to delete them first: their
// finalizers need the controller to drain their nodes and terminate their
// instances. NodeClaims on their way out (being deleted, or of a pool that is
// gone, which the garbage collector deletes them after: their pool was
// destroyed just before) are waited for, while the controller still runs to
// finish them.
func (in installation) nodeClaimsGuard(ctx context.Context, drain bool) error {
	claims, err := in.c.NodeClaims(ctx, "")
	if err != nil || len(claims) == 0 {
		return err
	}
	var live []string
	for _, nc := range claims {
		leaving, err := in.leaving(ctx, nc)
		if err != nil {
			return err
		}
		if !leaving {
			live = append(live, nc.Name)
		}
	}
	if len(live) > 0 && !drain {
		return fmt.Errorf("%d NodeClaims still exist (%s): their nodes run pods, and their finalizers need the controller to drain "+
			"the nodes and terminate the instances. Delete the node pools first (stowage_node_pool with allow_destroy_with_nodes), "+
			"or set destroy_node_claims = true and apply, to have the provider delete the NodeClaims and wait for the controller "+
			"to finish before removing it", len(live), strings.Join(live, ", "))
	}
	if len(live) > 0 {
		if err := in.c.DeleteNodeClaims(ctx, ""); err != nil {
			return err
		}
	}
	err = wait.PollUntilContextTimeout(ctx, pollInterval, removeTimeout, true, func(ctx context.Context) (bool, error) {
		left, err := in.c.NodeClaims(ctx, "")
		return len(left) == 0, err
	})
	if err != nil {
		return fmt.Errorf("waiting for the controller to finish the NodeClaims being deleted (%d): %w; is it running?", len(claims), err)
	}
	return nil
}

// leaving reports whether a NodeClaim is being deleted, or will be as its
// pool is gone.
func (in installation) leaving(ctx context.Context, nc v1alpha1.NodeClaim) (bool, error) {
	if nc.DeletionTimestamp != nil {
		return true, nil
	}
	pool := nc.Labels[v1alpha1.LabelNodePool]
	if pool == "" {
		return false, nil
	}
	u, err := in.c.Get(ctx, "nodepools", pool)
	return u == nil || u.GetDeletionTimestamp() != nil, err
}

// remove deletes every object, the CRDs first (while the controller still
// runs, for any finalizer their objects carry), then the rest in reverse
// order, and waits until each is gone.
func (in installation) remove(ctx context.Context, objs []*unstructured.Unstructured) error {
	ordered := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" {
			ordered = append(ordered, o)
		}
	}
	for i := len(objs) - 1; i >= 0; i-- {
		if objs[i].GetKind() != "CustomResourceDefinition" {
			ordered = append(ordered, objs[i])
		}
	}
	for _, o := range ordered {
		if theirs, err := in.othersShared(ctx, o); err != nil || theirs {
			if err != nil {
				return err
			}
			continue
		}
		if err := in.c.DeleteObject(ctx, o); err != nil {
			return err
		}
		err := wait.PollUntilContextTimeout(ctx, pollInterval, removeTimeout, true, func(ctx context.Context) (bool, error) {
			live, err := in.c.GetObject(ctx, o)
			return live == nil, err
		})
		if err != nil {
			return fmt.Errorf("waiting for %s to be deleted: %w", kube.ObjectName(o), err)
		}
	}
	return nil
}

// The CapacityBuffer and ProvisioningRequest CRDs are shared with other
// autoscalers (Cluster Autoscaler, Karpenter), which install them
// themselves: stowage_controller installs each, labelled, when the cluster
// lacks it, and leaves one without its label to its owner, neither
// applying, comparing nor deleting it.
const (
	installedByLabel = "stowage.dev/installed-by"
	installedByValue = "stowage_controller"
)

func shared(o *unstructured.Unstructured) bool {
	return o.GetKind() == "CustomResourceDefinition" && (o.GetName() == autoscalingcrd.Name || o.GetName() == autoscalingcrd.ProvisioningRequestName)
}

func installedByUs(live *unstructured.Unstructured) bool {
	return live.GetLabels()[installedByLabel] == installedByValue
}

// othersShared reports whether o is a shared CRD the cluster holds from
// another owner.
func (in installation) othersShared(ctx context.Context, o *unstructured.Unstructured) (bool, error) {
	if !shared(o) {
		return false, nil
	}
	live, err := in.c.GetObject(ctx, o)
	if err != nil || live == nil {
		return false, err
	}
	return !installedByUs(live), nil
}
