package disruption

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// ClusterWriter makes the disruption controller's changes to Kubernetes. The
// controller and the simulator both use ClientWriter, over a real API
// server's client or the simulator's.
type ClusterWriter interface {
	// CreateNodeClaim creates a replacement claim and returns it as stored
	// (with its uid). An AlreadyExists error means the name is taken: the
	// caller picks another.
	CreateNodeClaim(ctx context.Context, claim *v1alpha1.NodeClaim) (*v1alpha1.NodeClaim, error)
	// DeleteNodeClaim deletes claim; the termination controller then drains
	// its node and terminates its instance. A NotFound error means the claim
	// is already gone, a Conflict error that the name now belongs to another
	// claim (a different UID): either way there is nothing left to delete.
	DeleteNodeClaim(ctx context.Context, claim *v1alpha1.NodeClaim) error
	// SetDisruptedTaint puts the stowage.dev/disrupted NoSchedule taint on
	// the named Node (on) or takes it off, so that kube-scheduler places
	// nothing new on a node about to go, and takes it back when the
	// disruption is rolled back. A NotFound error means the Node is gone.
	SetDisruptedTaint(ctx context.Context, node string, on bool) error
}

// ClientWriter is a ClusterWriter over a controller-runtime client.
type ClientWriter struct {
	Client client.Client
}

var _ ClusterWriter = ClientWriter{}

// CreateNodeClaim creates a copy of claim.
func (w ClientWriter) CreateNodeClaim(ctx context.Context, claim *v1alpha1.NodeClaim) (*v1alpha1.NodeClaim, error) {
	out := claim.DeepCopy()
	if err := w.Client.Create(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteNodeClaim deletes the claim with claim's name, provided it is still
// the same object (its UID), so that a claim recreated under that name is
// left alone.
func (w ClientWriter) DeleteNodeClaim(ctx context.Context, claim *v1alpha1.NodeClaim) error {
	var opts []client.DeleteOption
	if claim.UID != "" {
		uid := claim.UID
		opts = append(opts, client.Preconditions{UID: &uid})
	}
	return w.Client.Delete(ctx, claim.DeepCopy(), opts...)
}

// SetDisruptedTaint reads the Node and patches its taints, failing on a
// concurrent change so that no taint another agent set is lost.
func (w ClientWriter) SetDisruptedTaint(ctx context.Context, name string, on bool) error {
	node := &corev1.Node{}
	if err := w.Client.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
		return err
	}
	has := slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&v1alpha1.DisruptedNoScheduleTaint) })
	if has == on {
		return nil
	}
	stored := node.DeepCopy()
	if on {
		node.Spec.Taints = append(node.Spec.Taints, v1alpha1.DisruptedNoScheduleTaint)
	} else {
		node.Spec.Taints = slices.DeleteFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&v1alpha1.DisruptedNoScheduleTaint) })
	}
	if err := w.Client.Patch(ctx, node, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("setting the disrupted taint of node %s to %t: %w", name, on, err)
	}
	return nil
}
