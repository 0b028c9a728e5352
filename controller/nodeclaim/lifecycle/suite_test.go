package lifecycle_test

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
	"github.com/stowage-dev/stowage/controller/nodeclaim/lifecycle"
	"github.com/stowage-dev/stowage/controller/nodeclaim/nodeclaimtest"
	"github.com/stowage-dev/stowage/internal/testenv"
)

// settle bounds every wait on the controller; it reacts in well under a second.
const settle = 20 * time.Second

func TestMain(m *testing.M) { nodeclaimtest.Main(m, testenv.Options{}) }

// start returns a test's Env running the lifecycle controller with opts.
func start(t *testing.T, opts lifecycle.Options) *nodeclaimtest.Env {
	t.Helper()
	e := nodeclaimtest.New(t)
	startWith(t, e, opts)
	return e
}

// startWith runs the lifecycle controller on an Env the test has prepared
// (its cloud's failures queued), retrying failed launches after 50 ms unless
// opts says otherwise.
func startWith(t *testing.T, e *nodeclaimtest.Env, opts lifecycle.Options) {
	t.Helper()
	if opts.RetryBaseDelay == 0 {
		opts.RetryBaseDelay, opts.RetryMaxDelay = 50*time.Millisecond, 200*time.Millisecond
	}
	if err := lifecycle.New(e.Clock, e.Mgr.GetClient(), e.Cloud, opts).Register(e.Mgr); err != nil {
		t.Fatalf("registering the controller: %v", err)
	}
	e.Start()
}

// hasCondition returns a check that the claim's condition has the status and,
// when reason is not empty, the reason.
func hasCondition(e *nodeclaimtest.Env, claim *v1alpha1.NodeClaim, condType string, status metav1.ConditionStatus, reason string) func() error {
	return func() error {
		if err := e.Get(claim); err != nil {
			return err
		}
		c := nodeclaim.Condition(claim, condType)
		if c == nil {
			return fmt.Errorf("claim %s has no %s condition: %v", claim.Name, condType, claim.Status.Conditions)
		}
		if c.Status != status || (reason != "" && c.Reason != reason) {
			return fmt.Errorf("claim %s condition %s is %s/%s (%s), want %s/%s", claim.Name, condType, c.Status, c.Reason, c.Message, status, reason)
		}
		return nil
	}
}

// deleting returns a check that the claim is being deleted.
func deleting(e *nodeclaimtest.Env, claim *v1alpha1.NodeClaim) func() error {
	return func() error {
		if err := e.Get(claim); err != nil {
			return err
		}
		if claim.DeletionTimestamp.IsZero() {
			return fmt.Errorf("claim %s is not being deleted", claim.Name)
		}
		return nil
	}
}

// settleAfterStep waits until the controller has acted on a clock step that
// set no deadline off: the alarm is still set (one that fired leaves the
// clock's waiters within Step, however slow the reconcile it starts) and two
// more launch attempts have been made, so that the second one's reconcile,
// liveness check included, began after the step. Only then does a claim not
// being deleted show that the controller chose not to.
func settleAfterStep(e *nodeclaimtest.Env) {
	e.T.Helper()
	if !e.Clock.HasWaiters() {
		e.T.Fatal("the step fired the controller's alarm")
	}
	base := e.Cloud.Creates()
	e.Eventually(settle, func() error {
		if n := e.Cloud.Creates() - base; n < 2 {
			return fmt.Errorf("%d launch attempts since the step, want 2", n)
		}
		return nil
	})
}

// waitForAlarm waits until the controller has set a timer on the fake clock.
func waitForAlarm(e *nodeclaimtest.Env) {
	e.T.Helper()
	e.Eventually(settle, func() error {
		if !e.Clock.HasWaiters() {
			return fmt.Errorf("no alarm is set on the fake clock")
		}
		return nil
	})
}
