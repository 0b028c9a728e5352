package awsemu_test

import (
	"context"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

// TestDescribeCapacityReservations reads reservations through the SDK: the
// documented fields, filters, pagination, unknown ids, and a limited
// reservation expiring on the clock.
func TestDescribeCapacityReservations(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	cfg := awsemu.DefaultConfig()
	cfg.Clock = clk
	e := awsemu.New(cfg)
	open := e.AddCapacityReservation(awsemu.CapacityReservation{InstanceType: "m6i.large", Zone: "us-east-1a", TotalInstanceCount: 4,
		Tags: map[string]string{"team": "ml"}})
	e.AddCapacityReservation(awsemu.CapacityReservation{InstanceType: "g5.xlarge", Zone: "us-east-1b", TotalInstanceCount: 2,
		InstanceMatchCriteria: awsemu.MatchTargeted})
	limited := e.AddCapacityReservation(awsemu.CapacityReservation{InstanceType: "c6i.large", Zone: "us-east-1c", TotalInstanceCount: 1,
		EndDateType: awsemu.EndLimited, EndDate: clk.Now().Add(time.Hour)})
	c := ec2.NewFromConfig(client(t, e))
	ctx := context.Background()

	out, err := c.DescribeCapacityReservations(ctx, &ec2.DescribeCapacityReservationsInput{CapacityReservationIds: []string{open}})
	if err != nil || len(out.CapacityReservations) != 1 {
		t.Fatalf("by id: %v, %v", out, err)
	}
	r := out.CapacityReservations[0]
	if awssdk.ToString(r.InstanceType) != "m6i.large" || awssdk.ToString(r.AvailabilityZone) != "us-east-1a" || awssdk.ToString(r.AvailabilityZoneId) != "use1-az1" ||
		awssdk.ToInt32(r.TotalInstanceCount) != 4 || awssdk.ToInt32(r.AvailableInstanceCount) != 4 || r.State != ec2types.CapacityReservationStateActive ||
		r.InstanceMatchCriteria != ec2types.InstanceMatchCriteriaOpen || r.InstancePlatform != ec2types.CapacityReservationInstancePlatformLinuxUnix ||
		r.Tenancy != ec2types.CapacityReservationTenancyDefault || r.EndDateType != ec2types.EndDateTypeUnlimited || len(r.Tags) != 1 ||
		awssdk.ToString(r.OwnerId) != cfg.AccountID || awssdk.ToString(r.CapacityReservationArn) == "" {
		t.Fatalf("reservation %+v", r)
	}
	filters := []struct {
		name, value string
		want        int
	}{
		{"instance-type", "g5.*", 1}, {"availability-zone", "us-east-1a", 1}, {"instance-match-criteria", "targeted", 1},
		{"state", "active", 3}, {"end-date-type", "limited", 1}, {"tag:team", "ml", 1}, {"instance-platform", "Linux/UNIX", 3},
	}
	for _, f := range filters {
		if got := countReservations(t, c, f.name, f.value, 0); got != f.want {
			t.Errorf("filter %s=%s: %d reservations, want %d", f.name, f.value, got, f.want)
		}
	}
	if got := countReservations(t, c, "state", "active", 1); got != 3 {
		t.Errorf("one per page: %d reservations, want 3", got)
	}
	if _, err := c.DescribeCapacityReservations(ctx, &ec2.DescribeCapacityReservationsInput{CapacityReservationIds: []string{"cr-0000"}}); code(err) != "InvalidCapacityReservationId.NotFound" {
		t.Errorf("unknown id: error %v", err)
	}
	clk.Step(time.Hour)
	if got := countReservations(t, c, "state", "expired", 0); got != 1 {
		t.Errorf("%d expired reservations after the end date, want 1 (%s)", got, limited)
	}
}

func countReservations(t *testing.T, c *ec2.Client, name, value string, perPage int32) int {
	t.Helper()
	in := &ec2.DescribeCapacityReservationsInput{Filters: []ec2types.Filter{{Name: awssdk.String(name), Values: []string{value}}}}
	if perPage > 0 {
		in.MaxResults = awssdk.Int32(perPage)
	}
	n := 0
	p := ec2.NewDescribeCapacityReservationsPaginator(c, in)
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("describing reservations: %v", err)
		}
		n += len(out.CapacityReservations)
	}
	return n
}

// TestFleetLaunchesIntoReservations launches on-demand fleets through the SDK
// from templates with each CapacityReservationSpecification: a targeted
// reservation is used and counted down until full, an open one takes any
// matching launch unless the template opts out, and a stopped instance gives
// its place back.
func TestFleetLaunchesIntoReservations(t *testing.T) {
	e := awsemu.New(awsemu.DefaultConfig())
	subnets, _ := e.SeedDefaultNetwork("c")
	images := e.SeedEKSImages("1.37")
	c := ec2.NewFromConfig(client(t, e))
	targeted := e.AddCapacityReservation(awsemu.CapacityReservation{InstanceType: "m6i.large", Zone: "us-east-1a", TotalInstanceCount: 1,
		InstanceMatchCriteria: awsemu.MatchTargeted})
	open := e.AddCapacityReservation(awsemu.CapacityReservation{InstanceType: "c6i.large", Zone: "us-east-1a", TotalInstanceCount: 1})
	specs := map[string]*ec2types.LaunchTemplateCapacityReservationSpecificationRequest{
		"target": {CapacityReservationTarget: &ec2types.CapacityReservationTarget{CapacityReservationId: awssdk.String(targeted)}},
		"none":   {CapacityReservationPreference: ec2types.CapacityReservationPreferenceNone},
		"open":   nil,
	}
	for name, spec := range specs {
		createTemplate(t, c, name, images, spec)
	}
	steps := []struct {
		template, instanceType string
		wantCode               string // in the fleet's errorSet
		wantReservation        string
	}{
		{"target", "m6i.large", "", targeted},
		{"target", "m6i.large", "ReservationCapacityExceeded", ""},
		{"target", "c6i.large", "InvalidParameterCombination", ""},
		{"none", "c6i.large", "", ""},
		{"open", "c6i.large", "", open},
		{"open", "c6i.large", "", ""}, // full: from the on-demand pool
	}
	var first string
	for i, s := range steps {
		id, errCode := launchFleet(t, c, s.template, s.instanceType, subnets[0])
		if errCode != s.wantCode {
			t.Fatalf("step %d: fleet error %q, want %q", i, errCode, s.wantCode)
		}
		if id == "" {
			continue
		}
		if in, _ := e.Instance(id); in.ReservationID != s.wantReservation {
			t.Fatalf("step %d: instance in reservation %q, want %q", i, in.ReservationID, s.wantReservation)
		}
		if first == "" {
			first = id
		}
	}
	if _, err := e.Terminate(first); err != nil {
		t.Fatalf("terminating: %v", err)
	}
	if r, _ := e.CapacityReservation(targeted); r.AvailableInstanceCount != 1 {
		t.Fatalf("reservation has room for %d after the termination, want 1", r.AvailableInstanceCount)
	}
}

func createTemplate(t *testing.T, c *ec2.Client, name string, images map[string]string, spec *ec2types.LaunchTemplateCapacityReservationSpecificationRequest) {
	t.Helper()
	image := images["/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/recommended/image_id"]
	_, err := c.CreateLaunchTemplate(context.Background(), &ec2.CreateLaunchTemplateInput{LaunchTemplateName: awssdk.String(name),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: awssdk.String(image), CapacityReservationSpecification: spec}})
	if err != nil {
		t.Fatalf("creating template %s: %v", name, err)
	}
}

// launchFleet launches one on-demand instance; it returns the instance id or
// the first error code of the fleet's errorSet.
func launchFleet(t *testing.T, c *ec2.Client, template, instanceType, subnet string) (string, string) {
	t.Helper()
	out, err := c.CreateFleet(context.Background(), &ec2.CreateFleetInput{Type: ec2types.FleetTypeInstant,
		TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{TotalTargetCapacity: awssdk.Int32(1),
			DefaultTargetCapacityType: ec2types.DefaultTargetCapacityTypeOnDemand},
		OnDemandOptions: &ec2types.OnDemandOptionsRequest{CapacityReservationOptions: &ec2types.CapacityReservationOptionsRequest{
			UsageStrategy: ec2types.FleetCapacityReservationUsageStrategyUseCapacityReservationsFirst}},
		LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
			LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateName: awssdk.String(template), Version: awssdk.String("$Latest")},
			Overrides:                   []ec2types.FleetLaunchTemplateOverridesRequest{{InstanceType: ec2types.InstanceType(instanceType), SubnetId: awssdk.String(subnet)}},
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
