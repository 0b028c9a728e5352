package lifecycle_test

import (
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
	"github.com/stowage-dev/stowage/controller/nodeclaim/lifecycle"
	"github.com/stowage-dev/stowage/controller/nodeclaim/nodeclaimtest"
)

// TestNodeSeenBeforeTheProviderIDIsPairedWhenTheIDIsRecorded: a Node whose
// event came before its claim's provider id was recorded maps to no claim;
// the claim must still pair with it as soon as the id is recorded, with no
// poll on any clock. The test plays the interleaving out: the claim's launch
// is held back (a failed attempt, retried only after an hour), the Node
// registers and reaches the controller's cache, and then the launch's status
// write lands.
func TestNodeSeenBeforeTheProviderIDIsPairedWhenTheIDIsRecorded(t *testing.T) {
	e := nodeclaimtest.New(t)
	e.Cloud.FailCreates(cloudprovider.NewCreateError(errors.New("held back"), "HeldBack", "the test records the launch itself"))
	startWith(t, e, lifecycle.Options{RetryBaseDelay: time.Hour, RetryMaxDelay: time.Hour})
	pool := e.NodePool(nil)
	e.Create(pool)
	claim := e.NodeClaim("late-id", pool)
	e.Create(claim)
	e.Eventually(settle, hasCondition(e, claim, v1alpha1.ConditionLaunched, metav1.ConditionUnknown, "HeldBack"))

	const providerID = "fake:///us-east-1a/i-registered-early"
	node := e.Node("early", providerID)
	e.Create(node)
	e.Eventually(settle, func() error { // in the controller's cache: its event has named no claim
		return e.Mgr.GetCache().Get(e.Ctx, client.ObjectKeyFromObject(node), &corev1.Node{})
	})
	e.UpdateStatus(claim, func() {
		claim.Status.ProviderID = providerID
		nodeclaim.SetCondition(claim, v1alpha1.ConditionLaunched, metav1.ConditionTrue, v1alpha1.ConditionLaunched, "", e.Clock.Now())
	})
	e.Eventually(settle, hasCondition(e, claim, v1alpha1.ConditionRegistered, metav1.ConditionTrue, ""))
	if claim.Status.NodeName != node.Name {
		t.Errorf("claim registered to node %q, want %s", claim.Status.NodeName, node.Name)
	}
}
