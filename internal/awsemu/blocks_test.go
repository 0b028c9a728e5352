package awsemu_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

// TestCapacityBlockLifecycle follows a Capacity Block of two g5.12xlarge
// through the SDK as the EC2 User Guide describes one: scheduled with no
// available capacity before its start (a launch then is short of
// capacity), active from it (two launches succeed, a third is short), the
// expiration warning 40 minutes before the end, its instances shutting down
// 30 minutes before it, no launch in those last 30 minutes, and expired at
// the end.
func TestCapacityBlockLifecycle(t *testing.T) {
	start := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(start.Add(-time.Hour))
	cfg := awsemu.DefaultConfig()
	cfg.Clock = clk
	e := awsemu.New(cfg)
	var events []awsemu.Event
	e.SetEventSink(awsemu.SinkFunc(func(ev awsemu.Event) {
		if ev.DetailType != "EC2 Instance State-change Notification" {
			events = append(events, ev)
		}
	}))
	subnets, _ := e.SeedDefaultNetwork("c")
	images := e.SeedEKSImages("1.37")
	end := start.Add(6 * time.Hour)
	block := e.AddCapacityBlock("g5.12xlarge", "us-east-1a", 2, start, end, nil)
	c := ec2.NewFromConfig(client(t, e))
	createBlockTemplate(t, c, "block", images, block, ec2types.MarketTypeCapacityBlock)
	createBlockTemplate(t, c, "block-on-demand", images, block, "")

	r := describeBlock(t, c, block)
	if r.ReservationType != ec2types.CapacityReservationTypeCapacityBlock || r.State != ec2types.CapacityReservationStateScheduled ||
		awssdk.ToInt32(r.AvailableInstanceCount) != 0 || awssdk.ToInt32(r.TotalInstanceCount) != 2 ||
		r.InstanceMatchCriteria != ec2types.InstanceMatchCriteriaTargeted || !awssdk.ToTime(r.StartDate).Equal(start) ||
		!awssdk.ToTime(r.EndDate).Equal(end) || r.EndDateType != ec2types.EndDateTypeLimited {
		t.Fatalf("before its start the block reads %+v", r)
	}
	if _, code := launchBlockFleet(t, c, "block", subnets[0]); code != "InsufficientInstanceCapacity" {
		t.Fatalf("a launch before the start: fleet error %q, want InsufficientInstanceCapacity", code)
	}
	clk.SetTime(start)
	if r := describeBlock(t, c, block); r.State != ec2types.CapacityReservationStateActive || awssdk.ToInt32(r.AvailableInstanceCount) != 2 {
		t.Fatalf("at its start the block reads %s with %d available", r.State, awssdk.ToInt32(r.AvailableInstanceCount))
	}
	if _, code := launchFleet(t, c, "block-on-demand", "g5.12xlarge", subnets[0]); code != "InvalidParameterCombination" {
		t.Fatalf("an on-demand launch targeting the block: fleet error %q, want InvalidParameterCombination", code)
	}
	var ids []string
	for range 2 {
		id, code := launchBlockFleet(t, c, "block", subnets[0])
		if id == "" {
			t.Fatalf("a launch into the active block failed: %s", code)
		}
		ids = append(ids, id)
	}
	if _, code := launchBlockFleet(t, c, "block", subnets[0]); code != "InsufficientInstanceCapacity" {
		t.Fatalf("a third launch into a block of two: fleet error %q, want InsufficientInstanceCapacity", code)
	}
	out, err := c.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{InstanceIds: ids[:1]})
	if err != nil {
		t.Fatal(err)
	}
	if in := out.Reservations[0].Instances[0]; in.InstanceLifecycle != ec2types.InstanceLifecycleTypeCapacityBlock ||
		awssdk.ToString(in.CapacityReservationId) != block {
		t.Fatalf("the instance reads lifecycle %q in reservation %q", in.InstanceLifecycle, awssdk.ToString(in.CapacityReservationId))
	}

	clk.SetTime(end.Add(-awsemu.BlockWarningLead))
	describeBlock(t, c, block)
	checkBlockEvents(t, events, block, end)
	for _, id := range ids {
		if in, _ := e.Instance(id); in.State != awsemu.StateRunning {
			t.Fatalf("instance %s is %s at the warning, want running until EC2 takes it 10 minutes later", id, in.State)
		}
	}
	clk.SetTime(end.Add(-awsemu.BlockTerminationLead))
	for _, id := range ids {
		if in, _ := e.Instance(id); in.State == awsemu.StateRunning || in.State == awsemu.StatePending {
			t.Fatalf("instance %s is still %s 30 minutes before the block ends", id, in.State)
		}
	}
	clk.Step(10 * time.Minute)
	if _, code := launchBlockFleet(t, c, "block", subnets[0]); code != "InsufficientInstanceCapacity" {
		t.Fatalf("a launch 20 minutes before the end: fleet error %q, want InsufficientInstanceCapacity", code)
	}
	clk.SetTime(end)
	if r := describeBlock(t, c, block); r.State != ec2types.CapacityReservationStateExpired {
		t.Fatalf("at its end the block is %s, want expired", r.State)
	}
	if len(events) != 2 {
		t.Fatalf("%d block events, want the delivery and the warning once each: %+v", len(events), events)
	}
}

// checkBlockEvents checks the two events EC2 sends by then: delivered at
// the start, and the expiration warning 40 minutes before the end, each
// naming the block's ARN and its end date.
func checkBlockEvents(t *testing.T, events []awsemu.Event, block string, end time.Time) {
	t.Helper()
	want := []struct{ detailType, at string }{
		{awsemu.DetailTypeBlockDelivered, end.Add(-6 * time.Hour).Format(time.RFC3339)},
		{awsemu.DetailTypeBlockExpirationWarning, end.Add(-awsemu.BlockWarningLead).Format(time.RFC3339)},
	}
	if len(events) != len(want) {
		t.Fatalf("%d events by the warning, want %d: %+v", len(events), len(want), events)
	}
	for i, w := range want {
		ev := events[i]
		var detail map[string]string
		if err := json.Unmarshal(ev.Detail, &detail); err != nil {
			t.Fatal(err)
		}
		if ev.DetailType != w.detailType || ev.Source != "aws.ec2" || ev.Time != w.at || len(ev.Resources) != 1 ||
			ev.Resources[0] != "arn:aws:ec2:us-east-1:123456789012:capacity-reservation/"+block ||
			detail["capacity-reservation-id"] != block || detail["end-date"] != end.Format(time.RFC3339) {
			t.Fatalf("event %d: %+v with detail %v, want %s at %s", i, ev, detail, w.detailType, w.at)
		}
	}
}

func describeBlock(t *testing.T, c *ec2.Client, id string) ec2types.CapacityReservation {
	t.Helper()
	out, err := c.DescribeCapacityReservations(context.Background(), &ec2.DescribeCapacityReservationsInput{CapacityReservationIds: []string{id}})
	if err != nil || len(out.CapacityReservations) != 1 {
		t.Fatalf("describing block %s: %v", id, err)
	}
	return out.CapacityReservations[0]
}

func createBlockTemplate(t *testing.T, c *ec2.Client, name string, images map[string]string, block string, market ec2types.MarketType) {
	t.Helper()
	image := images["/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/nvidia/recommended/image_id"]
	data := &ec2types.RequestLaunchTemplateData{ImageId: awssdk.String(image),
		CapacityReservationSpecification: &ec2types.LaunchTemplateCapacityReservationSpecificationRequest{
			CapacityReservationTarget: &ec2types.CapacityReservationTarget{CapacityReservationId: awssdk.String(block)}}}
	if market != "" {
		data.InstanceMarketOptions = &ec2types.LaunchTemplateInstanceMarketOptionsRequest{MarketType: market}
	}
	if _, err := c.CreateLaunchTemplate(context.Background(), &ec2.CreateLaunchTemplateInput{LaunchTemplateName: awssdk.String(name),
		LaunchTemplateData: data}); err != nil {
		t.Fatalf("creating template %s: %v", name, err)
	}
}

// launchBlockFleet launches one g5.12xlarge from a capacity-block fleet; it
// returns the instance id or the first error code of the fleet's errorSet.
func launchBlockFleet(t *testing.T, c *ec2.Client, template, subnet string) (string, string) {
	t.Helper()
	out, err := c.CreateFleet(context.Background(), &ec2.CreateFleetInput{Type: ec2types.FleetTypeInstant,
		TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{TotalTargetCapacity: awssdk.Int32(1),
			DefaultTargetCapacityType: ec2types.DefaultTargetCapacityTypeCapacityBlock},
		LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
			LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateName: awssdk.String(template), Version: awssdk.String("$Latest")},
			Overrides:                   []ec2types.FleetLaunchTemplateOverridesRequest{{InstanceType: "g5.12xlarge", SubnetId: awssdk.String(subnet)}},
		}}})
	if err != nil {
		t.Fatalf("CreateFleet: %v", err)
	}
	if len(out.Instances) > 0 {
		return out.Instances[0].InstanceIds[0], ""
	}
	if len(out.Errors) > 0 {
		return "", awssdk.ToString(out.Errors[0].ErrorCode)
	}
	t.Fatalf("fleet launched nothing and reported no error")
	return "", ""
}
