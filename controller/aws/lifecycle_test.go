package aws_test

import (
	"sync"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	stowaws "github.com/stowage-dev/stowage/controller/aws"
	"github.com/stowage-dev/stowage/controller/aws/awserrors"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

// testClientTokenReplay sends one CreateFleet twice with the same token through
// the real client, then with other parameters.
func testClientTokenReplay(t *testing.T, e *env) {
	t.Helper()
	lts := e.emu.LaunchTemplates()
	if len(lts) == 0 {
		t.Fatalf("no launch template to launch from")
	}
	input := func(instanceType string) *ec2.CreateFleetInput {
		return &ec2.CreateFleetInput{Type: ec2types.FleetTypeInstant, ClientToken: awssdk.String("token-1"),
			TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{TotalTargetCapacity: awssdk.Int32(1),
				DefaultTargetCapacityType: ec2types.DefaultTargetCapacityTypeOnDemand},
			LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
				LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateId: awssdk.String(lts[0].ID), Version: awssdk.String("$Latest")},
				Overrides:                   []ec2types.FleetLaunchTemplateOverridesRequest{{InstanceType: ec2types.InstanceType(instanceType), SubnetId: awssdk.String(e.subnets[0])}},
			}}}
	}
	before := len(e.emu.Instances())
	a, err := e.clients.EC2.CreateFleet(ctx(t), input("c6i.large"))
	if err != nil {
		t.Fatalf("first CreateFleet: %v", err)
	}
	b, err := e.clients.EC2.CreateFleet(ctx(t), input("c6i.large"))
	if err != nil {
		t.Fatalf("replayed CreateFleet: %v", err)
	}
	if a.Instances[0].InstanceIds[0] != b.Instances[0].InstanceIds[0] || len(e.emu.Instances()) != before+1 {
		t.Fatalf("replay launched %s then %s; %d new instances, want 1", a.Instances[0].InstanceIds[0], b.Instances[0].InstanceIds[0], len(e.emu.Instances())-before)
	}
	if _, err := e.clients.EC2.CreateFleet(ctx(t), input("m6i.large")); awserrors.Code(err) != "IdempotentParameterMismatch" {
		t.Fatalf("same token, other parameters: error %v, want IdempotentParameterMismatch", err)
	}
}

// TestGarbageCollectLeakedInstance: an instance whose NodeClaim is gone is
// still found by List (by its tags), and deleting it terminates it.
func TestGarbageCollectLeakedInstance(t *testing.T) {
	e := newEnv(t, awsemu.SmallCatalogue(), 3)
	if _, err := e.cp.Create(ctx(t), nodeClaim("leaked", []string{"m6i.large"}, []string{"on-demand"})); err != nil {
		t.Fatalf("Create: %v", err)
	}
	listed, err := e.cp.List(ctx(t))
	if err != nil || len(listed) != 1 || listed[0].Name != "leaked" {
		t.Fatalf("List = %v, %v; want the leaked claim", listed, err)
	}
	if err := e.cp.Delete(ctx(t), listed[0]); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := e.cp.Get(ctx(t), listed[0].Status.ProviderID); !cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Fatalf("Get after delete: %v, want not found", err)
	}
	if err := e.cp.Delete(ctx(t), listed[0]); !cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Fatalf("second Delete: %v, want not found", err)
	}
	if after, err := e.cp.List(ctx(t)); err != nil || len(after) != 0 {
		t.Fatalf("List after delete = %d claims, %v; want none", len(after), err)
	}
}

// TestDeleteTerminatesOnce: the termination controller calls Delete until
// the instance is gone; while it shuts down, Delete asks nothing more of EC2
// than its state (TestGarbageCollectLeakedInstance covers the instance gone).
func TestDeleteTerminatesOnce(t *testing.T) {
	e := newEnv(t, awsemu.SmallCatalogue(), 3, func(cfg *awsemu.Config, _ *stowaws.Options) { cfg.ShuttingDownDelay = time.Minute })
	claim, err := e.cp.Create(ctx(t), nodeClaim("leaving", []string{"m6i.large"}, []string{"on-demand"}))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	e.emu.ResetCalls()
	for i := range 3 {
		if err := e.cp.Delete(ctx(t), claim); err != nil {
			t.Fatalf("Delete %d: %v", i+1, err)
		}
	}
	if n := e.emu.Calls("TerminateInstances"); n != 1 {
		t.Fatalf("TerminateInstances called %d times for three Deletes of a shutting-down instance, want 1", n)
	}
}

// TestDriftOnAMIChange publishes a new image under the alias's parameter: the
// launched claim drifts once the resolution is refreshed.
func TestDriftOnAMIChange(t *testing.T) {
	e := newEnv(t, awsemu.SmallCatalogue(), 3)
	claim, err := e.cp.Create(ctx(t), nodeClaim("drifty", []string{"m6i.large"}, []string{"on-demand"}))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if reason, err := e.cp.IsDrifted(ctx(t), claim); err != nil || reason != "" {
		t.Fatalf("IsDrifted before = %q, %v; want not drifted", reason, err)
	}
	param := "/aws/service/eks/optimized-ami/" + k8sVersion + "/amazon-linux-2023/x86_64/standard/recommended/image_id"
	e.emu.PutParameter(param, e.emu.AddImage(awsemu.Image{Name: "al2023-next", Architecture: "x86_64"}))
	if reason, _ := e.cp.IsDrifted(ctx(t), claim); reason != "" {
		t.Fatalf("IsDrifted within the resolution TTL = %q, want the cached resolution", reason)
	}
	e.clk.Step(2 * time.Minute)
	if reason, err := e.cp.IsDrifted(ctx(t), claim); err != nil || reason != cloudprovider.DriftImage {
		t.Fatalf("IsDrifted after = %q, %v; want %s", reason, err, cloudprovider.DriftImage)
	}
}

// TestThrottlingStormStaysBounded: EC2 throttles every DescribeInstances; 20
// concurrent Gets make at most 3 attempts each and report the throttling.
func TestThrottlingStormStaysBounded(t *testing.T) {
	e := newEnv(t, awsemu.SmallCatalogue(), 3)
	claim, err := e.cp.Create(ctx(t), nodeClaim("storm", []string{"m6i.large"}, []string{"on-demand"}))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	e.emu.ResetCalls()
	e.emu.Inject(awsemu.Fault{Action: "DescribeInstances", Kind: awsemu.FaultThrottle})
	const callers = 20
	var wg sync.WaitGroup
	errs := make([]error, callers)
	for i := range callers {
		wg.Go(func() { _, errs[i] = e.cp.Get(ctx(t), claim.Status.ProviderID) })
	}
	wg.Wait()
	for i, err := range errs {
		if !awserrors.IsThrottled(err) {
			t.Fatalf("caller %d: error %v, want throttled", i, err)
		}
	}
	if n := e.emu.Calls("DescribeInstances"); n > callers*3 || n < callers {
		t.Fatalf("DescribeInstances calls = %d, want between %d and %d", n, callers, callers*3)
	}
	e.emu.ClearFaults()
	if _, err := e.cp.Get(ctx(t), claim.Status.ProviderID); err != nil {
		t.Fatalf("Get after the storm: %v", err)
	}
}

// Drift checks read the image recorded on the claim and the last List's
// view of the instance, so that checking every claim every few minutes does
// not describe every instance: an instance is described again only once
// that view is older than five minutes.
func TestDriftChecksReuseTheLastList(t *testing.T) {
	e := newEnv(t, awsemu.SmallCatalogue(), 3)
	claim, err := e.cp.Create(ctx(t), nodeClaim("listed", []string{"m6i.large"}, []string{"on-demand"}))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if _, err := e.cp.List(ctx(t)); err != nil {
		t.Fatal(err)
	}
	base := e.emu.Calls("DescribeInstances")
	if reason, err := e.cp.IsDrifted(ctx(t), claim); err != nil || reason != "" {
		t.Fatalf("IsDrifted = %q, %v; want not drifted", reason, err)
	}
	if got := e.emu.Calls("DescribeInstances") - base; got != 0 {
		t.Errorf("%d DescribeInstances calls right after a List, want 0", got)
	}
	e.clk.Step(6 * time.Minute)
	if _, err := e.cp.IsDrifted(ctx(t), claim); err != nil {
		t.Fatal(err)
	}
	if got := e.emu.Calls("DescribeInstances") - base; got != 1 {
		t.Errorf("%d DescribeInstances calls once the List is stale, want 1", got)
	}
}
