package aws_test

import (
	"testing"
	"time"

	"github.com/stowage-dev/stowage/controller/aws/cache"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

// TestAClaimLaunchesWhenCapacityReturnsToTheOfferingsThatFailedIt: EC2
// answers a repeated CreateFleet client token with the first answer, so a
// claim whose fleet found no capacity must not ask for the same offerings
// under the same token once the shortage memory lapses: it would be told
// "insufficient capacity" again, whatever EC2 has now, until the launch
// timeout (found by the chaos soak on the bed).
func TestAClaimLaunchesWhenCapacityReturnsToTheOfferingsThatFailedIt(t *testing.T) {
	e := newEnv(t, awsemu.SmallCatalogue(), 1)
	key := awsemu.PoolKey{InstanceType: "c6i.large", Zone: "us-east-1a", CapacityType: awsemu.CapacityOnDemand}
	e.emu.SetShortage(true, key)
	claim := nodeClaim("retried", []string{"c6i.large"}, []string{"on-demand"})
	if _, err := e.cp.Create(ctx(t), claim); !cloudprovider.IsInsufficientCapacityError(err) {
		t.Fatalf("Create with every offering short: %v, want insufficient capacity", err)
	}
	e.emu.SetShortage(false, key)
	e.clk.Step(cache.DefaultBackoff.Initial + time.Second) // the shortage memory lapses
	got, err := e.cp.Create(ctx(t), claim)
	if err != nil {
		t.Fatalf("Create once capacity is back: %v", err)
	}
	if got.Status.ProviderID == "" || e.emu.Calls("CreateFleet") != 2 {
		t.Errorf("provider id %q after %d CreateFleet calls, want an instance from the second", got.Status.ProviderID, e.emu.Calls("CreateFleet"))
	}
	// A fleet whose answer was lost is still asked again under its token:
	// the claim's instance is found, not launched twice.
	again, err := e.cp.Create(ctx(t), claim)
	if err != nil || again.Status.ProviderID != got.Status.ProviderID || len(e.emu.Instances()) != 1 {
		t.Errorf("Create again: %v, %v, %d instances; want the same instance", again.Status.ProviderID, err, len(e.emu.Instances()))
	}
}
