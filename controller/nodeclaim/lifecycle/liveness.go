package lifecycle

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowevents "github.com/stowage-dev/stowage/controller/events"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
)

// Phases a claim can time out in, the values of the phase metric label.
const (
	PhaseLaunch       = "launch"
	PhaseRegistration = "registration"
)

// liveness deletes a claim that has not launched within LaunchTimeout of its
// first reconcile, or whose Node has not registered within
// RegistrationTimeout of the launch. Deleting the claim lets the termination
// controller terminate whatever instance was started, and lets the
// provisioner plan the pods again. A claim not yet due sets an alarm for its
// deadline on the injected clock.
func (c *Controller) liveness(ctx context.Context, claim *v1alpha1.NodeClaim) (outcome, error) {
	phase, timeout, deadline, ok := c.deadline(claim)
	if !ok {
		return outcome{}, nil
	}
	if c.clk.Now().Before(deadline) {
		c.alarms.Set(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(claim)}, deadline)
		return outcome{}, nil
	}
	if err := c.kube.Delete(ctx, claim); client.IgnoreNotFound(err) != nil {
		return outcome{}, fmt.Errorf("deleting nodeclaim %s after its %s timed out: %w", claim.Name, phase, err)
	}
	c.backoff.Forget(claim.Name)
	TimedOut.WithLabelValues(poolName(claim), phase).Inc()
	c.log.Warn("deleted nodeclaim: "+phase+" timed out", "nodeclaim", claim.Name, "nodepool", poolName(claim),
		"instance_id", nodeclaim.InstanceID(claim.Status.ProviderID), "reason", phase+"_timeout")
	stowevents.Publish(c.recorder, timedOutEvent(claim, phase, timeout))
	return outcome{stop: true}, nil
}

// deadline returns the phase the claim is waiting in, its timeout, and the
// instant it times out; ok is false once the claim has registered.
func (c *Controller) deadline(claim *v1alpha1.NodeClaim) (phase string, timeout time.Duration, at time.Time, ok bool) {
	launched := nodeclaim.Condition(claim, v1alpha1.ConditionLaunched)
	switch {
	case launched == nil:
		return "", 0, time.Time{}, false
	case nodeclaim.IsTrue(claim, v1alpha1.ConditionRegistered):
		return "", 0, time.Time{}, false
	case !nodeclaim.IsTrue(claim, v1alpha1.ConditionLaunched):
		return PhaseLaunch, c.opts.LaunchTimeout, launched.LastTransitionTime.Add(c.opts.LaunchTimeout), true
	}
	return PhaseRegistration, c.opts.RegistrationTimeout, launched.LastTransitionTime.Add(c.opts.RegistrationTimeout), true
}
