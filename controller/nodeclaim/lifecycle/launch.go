package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	stowevents "github.com/stowage-dev/stowage/controller/events"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// Condition reasons this controller sets.
const (
	ReasonAwaitingReconciliation = "AwaitingReconciliation"
	ReasonInsufficientCapacity   = "InsufficientCapacity"
	ReasonNodeClassNotReady      = "NodeClassNotReady"
	// ReasonLaunchError labels launch failures the cloud did not classify; they
	// are retried by the work queue and set no condition.
	ReasonLaunchError = "LaunchError"
)

// launch creates the claim's instance unless it is already Launched. Create
// is idempotent per claim, so a launch whose status write was lost is simply
// asked again and returns the same instance.
func (c *Controller) launch(ctx context.Context, claim *v1alpha1.NodeClaim) (outcome, error) {
	if nodeclaim.IsTrue(claim, v1alpha1.ConditionLaunched) {
		return outcome{}, nil
	}
	created, err := c.cloud.Create(ctx, claim)
	if err != nil {
		return c.launchFailed(ctx, claim, err)
	}
	c.backoff.Forget(claim.Name)
	// Labels first: if the status write is lost, the next Create returns the
	// same instance and both writes are made again.
	if err := c.addLabels(ctx, claim, created.Labels, created.Annotations); err != nil {
		return outcome{}, err
	}
	if err := c.patchStatus(ctx, claim, func(now time.Time) {
		claim.Status.ProviderID = created.Status.ProviderID
		claim.Status.ImageID = created.Status.ImageID
		claim.Status.Capacity = created.Status.Capacity
		claim.Status.Allocatable = created.Status.Allocatable
		nodeclaim.SetCondition(claim, v1alpha1.ConditionLaunched, metav1.ConditionTrue, v1alpha1.ConditionLaunched, "", now)
	}); err != nil {
		return outcome{}, err
	}
	c.recordLaunch(claim)
	return outcome{}, nil
}

// addLabels adds the labels of what the cloud launched (instance type, zone,
// capacity type) to the claim, and the annotations it recorded (the NodeClass
// hash the drift controller compares).
func (c *Controller) addLabels(ctx context.Context, claim *v1alpha1.NodeClaim, labels, annotations map[string]string) error {
	stored := claim.DeepCopy()
	if claim.Labels == nil {
		claim.Labels = map[string]string{}
	}
	maps.Copy(claim.Labels, labels)
	if len(annotations) > 0 && claim.Annotations == nil {
		claim.Annotations = map[string]string{}
	}
	maps.Copy(claim.Annotations, annotations)
	if maps.Equal(stored.Labels, claim.Labels) && maps.Equal(stored.Annotations, claim.Annotations) {
		return nil
	}
	if err := c.kube.Patch(ctx, claim, client.MergeFrom(stored)); err != nil {
		return fmt.Errorf("labelling nodeclaim %s with its instance: %w", claim.Name, err)
	}
	return nil
}

func (c *Controller) recordLaunch(claim *v1alpha1.NodeClaim) {
	instanceType, zone := claim.Labels[corev1.LabelInstanceTypeStable], claim.Labels[corev1.LabelTopologyZone]
	capacityType := claim.Labels[v1alpha1.LabelCapacityType]
	Created.WithLabelValues(poolName(claim), capacityType, instanceType).Inc()
	c.log.Info("launched nodeclaim", "nodeclaim", claim.Name, "nodepool", poolName(claim),
		"instance_id", nodeclaim.InstanceID(claim.Status.ProviderID), "instance_type", instanceType,
		"zone", zone, "capacity_type", capacityType)
	stowevents.Publish(c.recorder, launchedEvent(claim))
}

// launchFailed records a failed Create. A shortage that leaves no offering
// the claim allows deletes the claim, as Karpenter does: the pods' next
// batch skips the short offerings and picks another type or pool, where
// retrying the claim could only fail again until the launch timeout. A
// shortage with offerings left, an unready NodeClass or a CreateError keeps
// the claim, sets Launched Unknown with the cloud's reason, and retries it
// with a per-claim backoff. Any other error is transient and returned, for
// the work queue's own backoff.
func (c *Controller) launchFailed(ctx context.Context, claim *v1alpha1.NodeClaim, err error) (outcome, error) {
	reason, message, classified := launchFailure(err)
	LaunchFailures.WithLabelValues(poolName(claim), reason).Inc()
	if !classified {
		return outcome{}, fmt.Errorf("launching nodeclaim %s: %w", claim.Name, err)
	}
	if cloudprovider.IsInsufficientCapacityError(err) {
		if left, lerr := c.offeringsLeft(ctx, claim); lerr != nil || !left {
			return c.deleteShort(ctx, claim, message, lerr)
		}
	}
	changed := false
	if err := c.patchStatus(ctx, claim, func(now time.Time) {
		changed = nodeclaim.SetCondition(claim, v1alpha1.ConditionLaunched, metav1.ConditionUnknown, reason, message, now)
	}); err != nil {
		return outcome{}, err
	}
	retry := c.backoff.When(claim.Name)
	if changed {
		c.log.Warn("launching nodeclaim failed; retrying", "nodeclaim", claim.Name, "nodepool", poolName(claim),
			"reason", reason, "error", message, "retry_in", retry.String())
		stowevents.Publish(c.recorder, launchFailedEvent(claim, reason, message))
	}
	return outcome{requeueAfter: retry}, nil
}

// offeringsLeft reports whether some offering the claim allows (type, zone
// and capacity type, with room for its requests) is not known to be short,
// by the cloud's instance types of the claim's pool. A claim without a pool
// cannot be planned again, so it keeps trying.
func (c *Controller) offeringsLeft(ctx context.Context, claim *v1alpha1.NodeClaim) (bool, error) {
	pool, err := nodeclaim.PoolFor(ctx, c.kube, claim)
	if err != nil {
		return false, err
	}
	if pool == nil {
		return true, nil
	}
	types, err := c.cloud.InstanceTypes(ctx, pool)
	if err != nil {
		return false, fmt.Errorf("listing the instance types of nodepool %s: %w", pool.Name, err)
	}
	return anyOfferingLeft(types, claim), nil
}

// anyOfferingLeft reports whether one of types that the claim allows, with
// room for its requests, has an available offering the claim allows.
func anyOfferingLeft(types []*cloudprovider.InstanceType, claim *v1alpha1.NodeClaim) bool {
	reqs := scheduling.FromAPI(claim.Spec.Requirements)
	requests := scheduling.FromList(claim.Spec.Resources.Requests)
	return slices.ContainsFunc(types, func(it *cloudprovider.InstanceType) bool {
		return it.Requirements.Intersects(typeKeys(reqs, it)) && requests.Fits(it.Allocatable()) &&
			len(it.Offerings.Available().Compatible(reqs)) > 0
	})
}

// typeKeys keeps the requirements on labels the instance type defines: the
// claim's others (its pool's, the pool template's own labels) are the node's
// to carry, not the type's.
func typeKeys(reqs scheduling.Requirements, it *cloudprovider.InstanceType) scheduling.Requirements {
	out := scheduling.Requirements{}
	for key, r := range reqs {
		if _, ok := it.Requirements[key]; ok {
			out[key] = r
		}
	}
	return out
}

// deleteShort deletes a claim every offering of which is short; lerr, when
// not nil, is why the offerings left could not be listed, which keeps the
// claim for the work queue's retry instead.
func (c *Controller) deleteShort(ctx context.Context, claim *v1alpha1.NodeClaim, message string, lerr error) (outcome, error) {
	if lerr != nil {
		return outcome{}, lerr
	}
	if err := c.kube.Delete(ctx, claim); client.IgnoreNotFound(err) != nil {
		return outcome{}, fmt.Errorf("deleting nodeclaim %s, whose every offering is short: %w", claim.Name, err)
	}
	c.backoff.Forget(claim.Name)
	c.log.Warn("deleted nodeclaim: every offering it allows is short", "nodeclaim", claim.Name,
		"nodepool", poolName(claim), "reason", ReasonInsufficientCapacity, "error", message)
	stowevents.Publish(c.recorder, shortEvent(claim, message))
	return outcome{stop: true}, nil
}

// launchFailure returns the condition reason and message for a Create error,
// and whether the cloud classified it (see cloudprovider.CloudProvider).
func launchFailure(err error) (reason, message string, classified bool) {
	var createErr *cloudprovider.CreateError
	switch {
	case cloudprovider.IsInsufficientCapacityError(err):
		return ReasonInsufficientCapacity, err.Error(), true
	case cloudprovider.IsNodeClassNotReadyError(err):
		return ReasonNodeClassNotReady, err.Error(), true
	case errors.As(err, &createErr):
		return nodeclaim.ConditionReason(createErr.Reason), createErr.Message, true
	}
	return ReasonLaunchError, err.Error(), false
}
