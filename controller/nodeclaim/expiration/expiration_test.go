package expiration_test

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/nodeclaim/expiration"
	"github.com/stowage-dev/stowage/controller/nodeclaim/nodeclaimtest"
	"github.com/stowage-dev/stowage/internal/testenv"
)

func TestMain(m *testing.M) { nodeclaimtest.Main(m, testenv.Options{}) }

const settle = 20 * time.Second

// launched creates a claim of the pool launched now, expiring after expireAfter.
func launched(e *nodeclaimtest.Env, name, expireAfter string) *v1alpha1.NodeClaim {
	e.T.Helper()
	claim := e.NodeClaim(name, nil)
	claim.Spec.ExpireAfter = ptr.To(v1alpha1.MustParseDuration(expireAfter))
	e.Create(claim)
	e.UpdateStatus(claim, func() {
		claim.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionLaunched, Status: metav1.ConditionTrue,
			Reason: v1alpha1.ConditionLaunched, LastTransitionTime: metav1.NewTime(e.Clock.Now())}}
	})
	return claim
}

// A claim is deleted at its launch plus expireAfter, on the injected clock,
// not before; the budgets play no part (there is no disruption controller
// here at all).
func TestAClaimIsDeletedAtItsExpiry(t *testing.T) {
	e := nodeclaimtest.New(t)
	claim := launched(e, "expiring", "1h")
	ctrl := expiration.New(e.Clock, e.Mgr.GetClient(), expiration.Options{})
	if err := ctrl.Register(e.Mgr); err != nil {
		t.Fatal(err)
	}
	base := nodeclaimtest.CounterValue(t, expiration.Expired.WithLabelValues(""))
	e.Start()
	// The controller has seen the claim once its alarm is set.
	e.Eventually(settle, func() error {
		if at, ok := ctrl.Alarms().Next(); !ok || !at.Equal(claim.Status.Conditions[0].LastTransitionTime.Add(time.Hour)) {
			return fmt.Errorf("alarm %v %v, want at the launch plus an hour", at, ok)
		}
		return nil
	})
	e.Clock.Step(59 * time.Minute)
	if err := e.Get(claim); err != nil || claim.DeletionTimestamp != nil {
		t.Fatalf("a minute before its expiry: %v, deleting %v; want the claim kept", err, claim.DeletionTimestamp)
	}
	e.Clock.Step(time.Minute)
	e.Eventually(settle, func() error { return e.Gone(claim) })
	e.ExpectCounter("expired", expiration.Expired.WithLabelValues(""), base, 1)
}

// expireAfter Never, and a claim not launched yet, have no expiry.
func TestNeverAndUnlaunchedClaimsDoNotExpire(t *testing.T) {
	e := nodeclaimtest.New(t)
	never := launched(e, "never", v1alpha1.Never)
	unlaunched := e.NodeClaim("unlaunched", nil)
	unlaunched.Spec.ExpireAfter = ptr.To(v1alpha1.MustParseDuration("1m"))
	e.Create(unlaunched)
	ctrl := expiration.New(e.Clock, e.Kube, expiration.Options{})
	e.Clock.Step(24 * time.Hour)
	for _, claim := range []*v1alpha1.NodeClaim{never, unlaunched} {
		if _, err := ctrl.Reconcile(e.Ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(claim)}); err != nil {
			t.Fatal(err)
		}
		if err := e.Get(claim); err != nil || claim.DeletionTimestamp != nil {
			t.Errorf("%s a day later: %v, deleting %v; want kept", claim.Name, err, claim.DeletionTimestamp)
		}
	}
	if n := ctrl.Alarms().Pending(); n != 0 {
		t.Errorf("%d alarms set, want none", n)
	}
}
