package lifecycle_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
	"github.com/stowage-dev/stowage/controller/nodeclaim/lifecycle"
	"github.com/stowage-dev/stowage/controller/nodeclaim/nodeclaimtest"
)

var (
	dedicatedTaint = corev1.Taint{Key: "example.com/dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}
	agentTaint     = corev1.Taint{Key: "example.com/agent-not-ready", Effect: corev1.TaintEffectNoExecute}
)

// TestClaimLaunchesRegistersAndInitializes follows one claim from creation to
// Ready: launched through the cloud, paired with the Node that registers with
// its provider id, the pool's labels and taints applied to that Node, and
// Initialized only once the Node is Ready, its startup taint is gone and the
// GPU it asked for is advertised.
func TestClaimLaunchesRegistersAndInitializes(t *testing.T) {
	e := start(t, lifecycle.Options{})
	pool := e.NodePool(map[string]string{"team": "search"})
	pool.Spec.Template.Spec.Taints = []corev1.Taint{dedicatedTaint}
	pool.Spec.Template.Spec.StartupTaints = []corev1.Taint{agentTaint}
	e.Create(pool)
	claim := e.NodeClaim("gpu", pool)
	claim.Spec.Resources.Requests = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
	e.Create(claim)

	e.Eventually(settle, hasCondition(e, claim, v1alpha1.ConditionLaunched, metav1.ConditionTrue, ""))
	expectLaunched(t, e, claim)
	e.Eventually(settle, hasCondition(e, claim, v1alpha1.ConditionRegistered, metav1.ConditionUnknown, lifecycle.ReasonNodeNotFound))

	node := e.Node("gpu", claim.Status.ProviderID)
	e.Create(node)
	e.Eventually(settle, hasCondition(e, claim, v1alpha1.ConditionRegistered, metav1.ConditionTrue, ""))
	if err := e.Get(node); err != nil {
		t.Fatal(err)
	}
	expectAdopted(t, claim, pool, node)
	e.Eventually(settle, hasCondition(e, claim, v1alpha1.ConditionInitialized, metav1.ConditionUnknown, lifecycle.ReasonNodeNotReady))

	e.SetReady(node)
	e.Eventually(settle, hasCondition(e, claim, v1alpha1.ConditionInitialized, metav1.ConditionUnknown, lifecycle.ReasonStartupTaintsExist))
	e.Update(node, func() {
		node.Spec.Taints = slices.DeleteFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&agentTaint) })
	})
	e.Eventually(settle, hasCondition(e, claim, v1alpha1.ConditionInitialized, metav1.ConditionUnknown, lifecycle.ReasonResourceNotRegistered))
	e.UpdateStatus(node, func() { node.Status.Allocatable["nvidia.com/gpu"] = resource.MustParse("1") })
	e.Eventually(settle, hasCondition(e, claim, v1alpha1.ConditionInitialized, metav1.ConditionTrue, ""))
	e.Eventually(settle, hasCondition(e, claim, v1alpha1.ConditionReady, metav1.ConditionTrue, ""))

	e.ExpectCounter("registered_total", lifecycle.Registered.WithLabelValues(pool.Name), 0, 1)
	e.ExpectCounter("initialized_total", lifecycle.Initialized.WithLabelValues(pool.Name), 0, 1)
}

// expectLaunched checks what a launch records: the finalizer, the instance's
// provider id and resources, its labels, a live instance, and the metric.
func expectLaunched(t *testing.T, e *nodeclaimtest.Env, claim *v1alpha1.NodeClaim) {
	t.Helper()
	if !controllerutil.ContainsFinalizer(claim, v1alpha1.TerminationFinalizer) {
		t.Errorf("claim finalizers = %v, want %s", claim.Finalizers, v1alpha1.TerminationFinalizer)
	}
	instanceType := claim.Labels[corev1.LabelInstanceTypeStable]
	if claim.Status.ProviderID == "" || instanceType == "" || claim.Labels[v1alpha1.LabelCapacityType] != v1alpha1.CapacityTypeOnDemand {
		t.Fatalf("launched claim has provider id %q and labels %v", claim.Status.ProviderID, claim.Labels)
	}
	if _, ok := claim.Status.Allocatable["nvidia.com/gpu"]; !ok {
		t.Errorf("claim allocatable %v lacks the GPU the instance type offers", claim.Status.Allocatable)
	}
	if !e.Cloud.Live(e.Ctx, claim.Status.ProviderID) {
		t.Errorf("instance %s is not running", claim.Status.ProviderID)
	}
	pool := claim.Labels[v1alpha1.LabelNodePool]
	e.ExpectCounter("created_total", lifecycle.Created.WithLabelValues(pool, v1alpha1.CapacityTypeOnDemand, instanceType), 0, 1)
}

// expectAdopted checks the Node after registration: pool and claim labels,
// the pool's taints and startup taints without the unregistered taint, the
// termination finalizer and the claim as owner.
func expectAdopted(t *testing.T, claim *v1alpha1.NodeClaim, pool *v1alpha1.NodePool, node *corev1.Node) {
	t.Helper()
	if claim.Status.NodeName != node.Name {
		t.Errorf("claim nodeName = %q, want %q", claim.Status.NodeName, node.Name)
	}
	for key, want := range map[string]string{
		"team":                         "search",
		v1alpha1.LabelNodePool:         pool.Name,
		corev1.LabelInstanceTypeStable: claim.Labels[corev1.LabelInstanceTypeStable],
		v1alpha1.LabelCapacityType:     v1alpha1.CapacityTypeOnDemand,
		nodeclaim.LabelRegistered:      "true",
		corev1.LabelTopologyZone:       claim.Labels[corev1.LabelTopologyZone],
		nodeclaimtest.TestLabel:        claim.Labels[nodeclaimtest.TestLabel],
		corev1.LabelHostname:           node.Name,
	} {
		if got := node.Labels[key]; got != want {
			t.Errorf("node label %s = %q, want %q", key, got, want)
		}
	}
	if !hasTaint(node, dedicatedTaint) || !hasTaint(node, agentTaint) || hasTaint(node, v1alpha1.UnregisteredNoExecuteTaint) {
		t.Errorf("node taints = %v, want the pool's taint and startup taint and not %s", node.Spec.Taints, v1alpha1.TaintKeyUnregistered)
	}
	if !controllerutil.ContainsFinalizer(node, v1alpha1.TerminationFinalizer) {
		t.Errorf("node finalizers = %v, want %s", node.Finalizers, v1alpha1.TerminationFinalizer)
	}
	if len(node.OwnerReferences) != 1 || node.OwnerReferences[0].UID != claim.UID || node.OwnerReferences[0].Kind != "NodeClaim" {
		t.Errorf("node owner references = %v, want the claim", node.OwnerReferences)
	}
}

func hasTaint(node *corev1.Node, want corev1.Taint) bool {
	return slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&want) })
}

// TestInsufficientCapacityRetriesTheSameClaim: a shortage keeps the claim,
// says so on its Launched condition, and the same claim launches on a later
// try; it is never deleted and recreated.
func TestInsufficientCapacityRetriesTheSameClaim(t *testing.T) {
	e := nodeclaimtest.New(t)
	ice := cloudprovider.NewInsufficientCapacityError("no capacity",
		cloudprovider.UnavailableOffering{InstanceType: "m5.large", Zone: "us-east-1a", CapacityType: "on-demand", Reason: "InsufficientInstanceCapacity"})
	e.Cloud.FailCreates(ice, ice)
	startWith(t, e, lifecycle.Options{RetryBaseDelay: 500 * time.Millisecond, RetryMaxDelay: time.Second})
	pool := e.NodePool(nil)
	e.Create(pool)
	claim := e.NodeClaim("short", pool)
	e.Create(claim)
	uid := claim.UID

	e.Eventually(settle, hasCondition(e, claim, v1alpha1.ConditionLaunched, metav1.ConditionUnknown, lifecycle.ReasonInsufficientCapacity))
	e.Eventually(settle, hasCondition(e, claim, v1alpha1.ConditionLaunched, metav1.ConditionTrue, ""))
	if claim.UID != uid || !claim.DeletionTimestamp.IsZero() {
		t.Errorf("claim was replaced or deleted: uid %s -> %s, deletion %v", uid, claim.UID, claim.DeletionTimestamp)
	}
	if got := e.Cloud.Creates(); got != 3 {
		t.Errorf("Create called %d times, want 3 (two shortages, then the launch)", got)
	}
	e.ExpectCounter("launch_failures_total{reason=InsufficientCapacity}",
		lifecycle.LaunchFailures.WithLabelValues(pool.Name, lifecycle.ReasonInsufficientCapacity), 0, 2)
}

// TestCreateErrorSetsTheCloudsReasonAndMessage: a CreateError's reason and
// message go on the Launched condition, and Ready says the claim is not launched.
func TestCreateErrorSetsTheCloudsReasonAndMessage(t *testing.T) {
	e := nodeclaimtest.New(t)
	e.Cloud.FailCreates(cloudprovider.NewCreateError(errors.New("UnauthorizedOperation"), "UnauthorizedOperation",
		"the controller's role may not call ec2:CreateFleet"))
	startWith(t, e, lifecycle.Options{RetryBaseDelay: time.Hour, RetryMaxDelay: time.Hour})
	pool := e.NodePool(nil)
	e.Create(pool)
	claim := e.NodeClaim("denied", pool)
	e.Create(claim)

	e.Eventually(settle, hasCondition(e, claim, v1alpha1.ConditionLaunched, metav1.ConditionUnknown, "UnauthorizedOperation"))
	if got := nodeclaim.Condition(claim, v1alpha1.ConditionLaunched).Message; got != "the controller's role may not call ec2:CreateFleet" {
		t.Errorf("Launched message = %q, want the CreateError's message", got)
	}
	if err := hasCondition(e, claim, v1alpha1.ConditionReady, metav1.ConditionUnknown, "NotLaunched")(); err != nil {
		t.Error(err)
	}
	e.ExpectCounter("launch_failures_total{reason=UnauthorizedOperation}",
		lifecycle.LaunchFailures.WithLabelValues(pool.Name, "UnauthorizedOperation"), 0, 1)
}

// TestLaunchTimeoutDeletesTheClaim: a claim that cannot launch for five
// minutes of the injected clock is deleted.
func TestLaunchTimeoutDeletesTheClaim(t *testing.T) {
	e := nodeclaimtest.New(t)
	shortages := make([]error, 1000)
	for i := range shortages {
		shortages[i] = cloudprovider.NewInsufficientCapacityError("no capacity")
	}
	e.Cloud.FailCreates(shortages...)
	startWith(t, e, lifecycle.Options{})
	pool := e.NodePool(nil)
	e.Create(pool)
	claim := e.NodeClaim("never", pool)
	e.Create(claim)
	e.Eventually(settle, hasCondition(e, claim, v1alpha1.ConditionLaunched, metav1.ConditionUnknown, lifecycle.ReasonInsufficientCapacity))
	waitForAlarm(e)

	e.Clock.Step(lifecycle.DefaultLaunchTimeout - time.Minute)
	settleAfterStep(e)
	if err := deleting(e, claim)(); err == nil {
		t.Fatal("claim deleted a minute before its launch timeout")
	}
	e.Clock.Step(time.Minute + time.Second)
	e.Eventually(settle, deleting(e, claim))
	e.ExpectCounter("timed_out_total{phase=launch}", lifecycle.TimedOut.WithLabelValues(pool.Name, lifecycle.PhaseLaunch), 0, 1)
}

// TestRegistrationTimeoutDeletesTheClaim: a launched claim whose Node does not
// register within fifteen minutes of the launch is deleted (and so, through
// its finalizer, its instance).
func TestRegistrationTimeoutDeletesTheClaim(t *testing.T) {
	e := start(t, lifecycle.Options{})
	pool := e.NodePool(nil)
	e.Create(pool)
	claim := e.NodeClaim("lost", pool)
	e.Create(claim)
	e.Eventually(settle, hasCondition(e, claim, v1alpha1.ConditionRegistered, metav1.ConditionUnknown, lifecycle.ReasonNodeNotFound))
	waitForAlarm(e)

	e.Clock.Step(lifecycle.DefaultLaunchTimeout + time.Second) // past the launch timeout, which no longer applies
	e.Clock.Step(lifecycle.DefaultRegistrationTimeout - lifecycle.DefaultLaunchTimeout)
	e.Eventually(settle, deleting(e, claim))
	e.ExpectCounter("timed_out_total{phase=registration}", lifecycle.TimedOut.WithLabelValues(pool.Name, lifecycle.PhaseRegistration), 0, 1)
	if got := nodeclaimtest.CounterValue(t, lifecycle.TimedOut.WithLabelValues(pool.Name, lifecycle.PhaseLaunch)); got != 0 {
		t.Errorf("timed_out_total{phase=launch} = %v, want 0", got)
	}
}
