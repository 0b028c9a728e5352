package termination

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
)

// terminator runs the termination sequence; both controllers share it.
type terminator struct {
	clk      clock.Clock
	kube     client.Client
	cloud    cloudprovider.CloudProvider
	opts     Options
	log      hclog.Logger
	recorder events.EventRecorder
	backoff  workqueue.TypedRateLimiter[string] // job key -> eviction retry backoff
	moved    movedPods
	// released and awaited are the jobs whose drain has started, and those
	// that were held for their pods' replacement (keyed by job, uid "").
	released, awaited movedPods
	// refused are the pods of each job whose last eviction a PDB refused.
	refused refusals
	// waitStart is job key -> when its drain first waited for a replacement.
	waitMu    sync.Mutex
	waitStart map[string]time.Time
}

// job is one termination: a claim (or, for a Node no claim owns, a stand-in
// naming its provider id) and its Node, if one registered.
type job struct {
	// key names the job for the eviction backoff: "nodeclaim/<name>" or "node/<name>".
	key   string
	claim *v1alpha1.NodeClaim
	node  *corev1.Node
	// deadline is when do-not-disrupt pods and PDBs stop being honoured; nil is never.
	deadline *time.Time
}

// terminate drains the job's Node, terminates its instance until the cloud
// reports it gone, and deletes the Node. It returns how long to wait before
// calling again, or 0 once everything is done.
func (t *terminator) terminate(ctx context.Context, j job) (time.Duration, error) {
	if j.node != nil {
		if wait, err := t.drain(ctx, j); err != nil || wait > 0 {
			return wait, err
		}
	}
	gone, err := t.terminateInstance(ctx, j.claim)
	if err != nil {
		return 0, err
	}
	if !gone {
		return t.opts.InstancePollInterval, t.markTerminating(ctx, j)
	}
	if j.node != nil {
		return 0, t.removeNode(ctx, j)
	}
	return 0, nil
}

// terminateInstance calls Delete, which keeps succeeding while the instance
// shuts down (or, just launched, is not visible to the cloud's API yet) and
// returns NodeClaimNotFoundError once it is gone.
func (t *terminator) terminateInstance(ctx context.Context, claim *v1alpha1.NodeClaim) (gone bool, err error) {
	err = t.cloud.Delete(ctx, claim)
	if cloudprovider.IsNodeClaimNotFoundError(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("terminating instance %s of nodeclaim %s: %w", claim.Status.ProviderID, claim.Name, err)
	}
	return false, nil
}

// markTerminating sets the claim's InstanceTerminating condition once its
// drain is done and the cloud accepted the termination, so that disruption
// budgets stop counting its node. A Node no claim owns has none to set.
func (t *terminator) markTerminating(ctx context.Context, j job) error {
	if !strings.HasPrefix(j.key, "nodeclaim/") || nodeclaim.IsTrue(j.claim, v1alpha1.ConditionInstanceTerminating) {
		return nil
	}
	stored := j.claim.DeepCopy()
	nodeclaim.SetCondition(j.claim, v1alpha1.ConditionInstanceTerminating, metav1.ConditionTrue, "Drained",
		"the node is drained and its instance is shutting down", t.clk.Now())
	if err := t.kube.Status().Patch(ctx, j.claim, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("marking nodeclaim %s terminating: %w", j.claim.Name, err)
	}
	return nil
}

// removeNode lets the Node go: its finalizer is removed first, so that the
// delete that follows removes it at once.
func (t *terminator) removeNode(ctx context.Context, j job) error {
	if err := t.release(ctx, j.node); err != nil {
		return err
	}
	if j.node.DeletionTimestamp.IsZero() {
		if err := t.kube.Delete(ctx, j.node); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting node %s: %w", j.node.Name, err)
		}
	}
	t.backoff.Forget(j.key)
	pool := j.claim.Labels[v1alpha1.LabelNodePool]
	NodesTerminated.WithLabelValues(pool).Inc()
	t.log.Info("deleted node", "node", j.node.Name, "nodeclaim", j.claim.Name, "nodepool", pool,
		"instance_id", nodeclaim.InstanceID(j.node.Spec.ProviderID))
	return nil
}

// taint puts the disrupted NoSchedule taint on the Node, so that nothing new
// lands on it while it drains; it reports whether the taint was new.
func (t *terminator) taint(ctx context.Context, node *corev1.Node) (bool, error) {
	for i := range node.Spec.Taints {
		if node.Spec.Taints[i].MatchTaint(&v1alpha1.DisruptedNoScheduleTaint) {
			return false, nil
		}
	}
	stored := node.DeepCopy()
	node.Spec.Taints = append(node.Spec.Taints, v1alpha1.DisruptedNoScheduleTaint)
	if err := t.kube.Patch(ctx, node, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
		return false, fmt.Errorf("tainting node %s: %w", node.Name, err)
	}
	return true, nil
}
