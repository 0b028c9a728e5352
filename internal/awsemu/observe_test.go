package awsemu_test

import (
	"context"
	"maps"
	"sync"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

func TestOnCallHearsEveryRequestWithItsTokenAndTime(t *testing.T) {
	at := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	cfg := awsemu.DefaultConfig()
	cfg.Clock = clocktesting.NewFakeClock(at)
	e := awsemu.New(cfg)
	var mu sync.Mutex
	var calls []awsemu.Call
	e.OnCall(func(c awsemu.Call) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, c)
	})
	e.Inject(awsemu.Fault{Action: "CreateFleet", Kind: awsemu.FaultServerError, Times: 1})
	c := ec2.NewFromConfig(client(t, e))
	ctx := context.Background()
	if _, err := c.DescribeAvailabilityZones(ctx, &ec2.DescribeAvailabilityZonesInput{}); err != nil {
		t.Fatal(err)
	}
	// Refused by the fault, and heard all the same.
	_, _ = c.CreateFleet(ctx, &ec2.CreateFleetInput{
		ClientToken: awssdk.String("claim-a-token"), Type: ec2types.FleetTypeInstant,
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance,
			Tags: []ec2types.Tag{{Key: awssdk.String("stowage.dev/nodeclaim"), Value: awssdk.String("claim-a")}}}},
		LaunchTemplateConfigs:       []ec2types.FleetLaunchTemplateConfigRequest{{}},
		TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{TotalTargetCapacity: awssdk.Int32(1)},
	})
	mu.Lock()
	defer mu.Unlock()
	want := []awsemu.Call{{Action: "DescribeAvailabilityZones", Received: at},
		{Action: "CreateFleet", Received: at, ClientToken: "claim-a-token", InstanceTags: map[string]string{"stowage.dev/nodeclaim": "claim-a"}}}
	if len(calls) < len(want) {
		t.Fatalf("observed %v, want at least %v", calls, want)
	}
	for i, w := range want {
		if g := calls[i]; g.Action != w.Action || !g.Received.Equal(w.Received) || g.ClientToken != w.ClientToken || !maps.Equal(g.InstanceTags, w.InstanceTags) {
			t.Errorf("call %d = %+v, want %+v", i, g, w)
		}
	}
}
