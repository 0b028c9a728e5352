package aws_test

import (
	"context"
	"strings"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/prometheus/client_golang/prometheus/testutil"

	stowaws "github.com/stowage-dev/stowage/controller/aws"
	"github.com/stowage-dev/stowage/controller/aws/awserrors"
	"github.com/stowage-dev/stowage/controller/aws/cache"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

// TestAFleetsDenialsAreSurfacedWithItsShortages: the controller's role may
// not run m6i.large, and c6i.large is short in every zone. The fleet answers
// both in its errors (the denial as UnauthorizedOperation, HTTP 200): the
// claim's launch fails with a CreateError naming the denied action and
// resource and the fix, for the NodeClaim's Launched condition, though a
// shortage came with it; the denial counts in the metric; and the m6i
// offerings are avoided for a while instead of being tried each batch.
func TestAFleetsDenialsAreSurfacedWithItsShortages(t *testing.T) {
	e := newEnv(t, awsemu.SmallCatalogue(), 3)
	e.denialsExpected.Store(true)
	deny := `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Action":"ec2:RunInstances",
 "Resource":"arn:aws:ec2:us-east-1:123456789012:instance/*","Condition":{"StringEquals":{"ec2:InstanceType":"m6i.large"}}}]}`
	if _, err := iam.NewFromConfig(sdkConfig(e.srv.URL, 1)).PutRolePolicy(context.Background(), &iam.PutRolePolicyInput{
		RoleName: awssdk.String(controllerRole), PolicyName: awssdk.String("DenyM6i"), PolicyDocument: awssdk.String(deny)}); err != nil {
		t.Fatal(err)
	}
	for _, z := range e.emu.Zones() {
		e.emu.SetShortage(true, awsemu.PoolKey{InstanceType: "c6i.large", Zone: z.Name, CapacityType: awsemu.CapacityOnDemand})
	}
	before := testutil.ToFloat64(stowaws.LaunchDenials.WithLabelValues("on-demand"))
	_, err := e.cp.Create(ctx(t), nodeClaim("denied", []string{"m6i.large", "c6i.large"}, []string{"on-demand"}))
	var ce *cloudprovider.CreateError
	if !errorsAs(err, &ce) || ce.Reason != awserrors.ReasonUnauthorized {
		t.Fatalf("Create: %v; want a CreateError with reason %s", err, awserrors.ReasonUnauthorized)
	}
	for _, want := range []string{"ec2:RunInstances", "arn:aws:ec2:us-east-1:123456789012:instance/*", "controller's IAM policy"} {
		if !strings.Contains(ce.Message, want) {
			t.Errorf("the Launched condition's message %q does not name %s", ce.Message, want)
		}
	}
	if got := testutil.ToFloat64(stowaws.LaunchDenials.WithLabelValues("on-demand")) - before; got < 1 {
		t.Errorf("%v denials counted, want at least 1", got)
	}
	for _, z := range e.emu.Zones() {
		if !e.cp.Unavailable().IsUnavailable(cache.Offering{InstanceType: "m6i.large", Zone: z.Name, CapacityType: "on-demand"}) {
			t.Errorf("m6i.large in %s is not avoided after IAM denied its launch", z.Name)
		}
	}
	e.emu.ResetCalls()
	if _, err := e.cp.Create(ctx(t), nodeClaim("again", []string{"m6i.large"}, []string{"on-demand"})); err == nil {
		t.Fatal("a launch of the denied type succeeded")
	}
	if n := e.emu.Calls("CreateFleet"); n != 0 {
		t.Errorf("%d fleets tried the denied offering again at once, want none", n)
	}
}

// TestAMissingSpotRoleIsAConditionWithTheFix: in an account that has never
// run spot, a controller that may not create AWSServiceRoleForEC2Spot gets
// AuthFailure.ServiceLinkedRoleCreationNotPermitted for its spot launches: a
// spot-only claim fails with a CreateError whose message gives the fix, and
// a claim that also allows on-demand launches on-demand, spot avoided.
func TestAMissingSpotRoleIsAConditionWithTheFix(t *testing.T) {
	e := newEnv(t, awsemu.SmallCatalogue(), 3, func(cfg *awsemu.Config, _ *stowaws.Options) { cfg.NoSpotServiceLinkedRole = true })
	e.denialsExpected.Store(true)
	_, err := e.cp.Create(ctx(t), nodeClaim("spot", []string{"m6i.large"}, []string{"spot"}))
	var ce *cloudprovider.CreateError
	if !errorsAs(err, &ce) || ce.Reason != awserrors.ReasonSpotRoleMissing ||
		!strings.Contains(ce.Message, "aws iam create-service-linked-role --aws-service-name spot.amazonaws.com") {
		t.Fatalf("a spot launch without the spot role: %v; want a CreateError %s giving the fix", err, awserrors.ReasonSpotRoleMissing)
	}
	claim, err := e.cp.Create(ctx(t), nodeClaim("either", []string{"m6i.large"}, []string{"spot", "on-demand"}))
	if err != nil || claim.Labels["stowage.dev/capacity-type"] != "on-demand" {
		t.Fatalf("a claim allowing on-demand too: %v %v, want it launched on-demand", err, claim)
	}
	if e.emu.SpotServiceLinkedRoleExists() {
		t.Error("the spot role exists though the controller may not create it")
	}
}
