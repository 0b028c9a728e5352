package aws_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowaws "github.com/stowage-dev/stowage/controller/aws"
	"github.com/stowage-dev/stowage/controller/aws/instance"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

// visibilityDelay is how long the emulator hides a new instance from
// DescribeInstances and TerminateInstances in these tests.
const visibilityDelay = 20 * time.Second

// hiddenAtFirst runs the emulator on the test's clock, with new instances
// unknown to EC2's API for visibilityDelay.
func hiddenAtFirst(cfg *awsemu.Config, o *stowaws.Options) {
	cfg.Clock, cfg.VisibilityDelay = o.Clock, visibilityDelay
}

// TestDeleteDoesNotTakeANewInstanceEC2CannotSeeForGone: EC2 answers
// InvalidInstanceID.NotFound for an instance launched moments ago (Amazon
// EC2 API, "Eventual consistency"). Delete, for this process's launch and,
// after a restart, for a claim whose Launched condition is that recent, does
// not report it gone but leaves it to a later call, which terminates it; a
// NotFound long after the launch is gone.
func TestDeleteDoesNotTakeANewInstanceEC2CannotSeeForGone(t *testing.T) {
	e := newEnv(t, awsemu.SmallCatalogue(), 1, hiddenAtFirst)
	claim, err := e.cp.Create(ctx(t), nodeClaim("fresh", []string{"m6i.large"}, []string{"on-demand"}))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	id := instanceID(t, claim)
	if err := e.cp.Delete(ctx(t), claim); err != nil {
		t.Fatalf("Delete within the delay: %v, want nil (not gone, try again)", err)
	}
	restarted := e.newProvider(e.clients)
	if err := restarted.Delete(ctx(t), claim); !cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Fatalf("a restarted process, with no Launched condition to go by: %v, want not found", err)
	}
	launched := claim.DeepCopy()
	launched.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionLaunched, Status: metav1.ConditionTrue,
		Reason: v1alpha1.ConditionLaunched, LastTransitionTime: metav1.NewTime(e.clk.Now())}}
	if err := restarted.Delete(ctx(t), launched); err != nil {
		t.Fatalf("a restarted process, the claim Launched just now: %v, want nil", err)
	}
	if in, _ := e.emu.Instance(id); in.State != awsemu.StateRunning || e.emu.Calls("TerminateInstances") != 0 {
		t.Fatalf("instance %s within the delay, %d TerminateInstances calls; want running, none", in.State, e.emu.Calls("TerminateInstances"))
	}
	e.clk.Step(visibilityDelay)
	if err := e.cp.Delete(ctx(t), claim); err != nil {
		t.Fatalf("Delete once EC2 shows it: %v", err)
	}
	if in, _ := e.emu.Instance(id); in.State != awsemu.StateTerminated {
		t.Fatalf("instance %s after Delete, want terminated", in.State)
	}
	if err := e.cp.Delete(ctx(t), claim); !cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Fatalf("Delete of the terminated instance: %v, want not found", err)
	}
	stranger := claim.DeepCopy()
	stranger.Status.ProviderID = "aws:///us-east-1a/i-0123456789abcdef0"
	if err := e.cp.Delete(ctx(t), stranger); !cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Fatalf("Delete of an instance never launched here: %v, want not found", err)
	}
}

// TestCreateAgainWithinTheDelayFindsTheFirstInstance: a Create retried (its
// status write lost) while EC2 does not list the claim's instance yet, and
// whose fleet would ask for other offerings (the first fleet found one of
// them short), returns the instance the first call started instead of
// launching a second.
func TestCreateAgainWithinTheDelayFindsTheFirstInstance(t *testing.T) {
	e := newEnv(t, awsemu.SmallCatalogue(), 1, hiddenAtFirst)
	e.emu.SetShortage(true, awsemu.PoolKey{InstanceType: "c6i.large", Zone: "us-east-1a", CapacityType: awsemu.CapacityOnDemand})
	claim := nodeClaim("retried", []string{"c6i.large", "m6i.large"}, []string{"on-demand"})
	first, err := e.cp.Create(ctx(t), claim)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	again, err := e.cp.Create(ctx(t), claim)
	if err != nil {
		t.Fatalf("Create again: %v", err)
	}
	if again.Status.ProviderID != first.Status.ProviderID || again.Status.ImageID != first.Status.ImageID || len(e.emu.Instances()) != 1 {
		t.Fatalf("Create again: %s (image %s), %d instances; want %s (image %s) and no second launch", again.Status.ProviderID,
			again.Status.ImageID, len(e.emu.Instances()), first.Status.ProviderID, first.Status.ImageID)
	}
	if _, err := e.cp.Get(ctx(t), first.Status.ProviderID); err == nil || cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Fatalf("Get within the delay: %v, want an error that is not not-found", err)
	}
}

func instanceID(t *testing.T, claim *v1alpha1.NodeClaim) string {
	t.Helper()
	id, err := instance.ParseProviderID(claim.Status.ProviderID)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
