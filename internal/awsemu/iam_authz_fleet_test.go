package awsemu_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

// TestAnInstantFleetIsAuthorizedOnWhatAWSAuthorizes launches a spot fleet
// from a template with a snapshot-backed data volume, a key pair and a
// placement group, and a reserved one, and compares the resource types
// each action was authorized on with the Service Authorization Reference's
// lists for ec2:CreateFleet and ec2:RunInstances (iam-data 2026-09): a
// RunInstances is authorized on the image's snapshot, the spot request of a
// spot launch and the capacity reservation of a reserved one; a CreateFleet
// is not authorized on security groups, network interfaces, snapshots or
// spot requests, which the reference does not list for it.
func TestAnInstantFleetIsAuthorizedOnWhatAWSAuthorizes(t *testing.T) {
	e := awsemu.New(awsemu.DefaultConfig())
	subnets, sg := e.SeedDefaultNetwork("c")
	images := e.SeedEKSImages("1.37")
	image := images["/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/recommended/image_id"]
	reservation := e.AddCapacityReservation(awsemu.CapacityReservation{InstanceType: "m6i.large", Zone: "us-east-1a",
		TotalInstanceCount: 1, InstanceMatchCriteria: awsemu.MatchTargeted})
	c := ec2.NewFromConfig(client(t, e))
	var mu sync.Mutex
	types := map[string]map[string]bool{} // action -> resource types
	e.OnAuthorize(func(a awsemu.Authorization) {
		mu.Lock()
		defer mu.Unlock()
		if types[a.Action] == nil {
			types[a.Action] = map[string]bool{}
		}
		typ := a.Resource[strings.LastIndex(a.Resource, ":")+1:]
		typ, _, _ = strings.Cut(typ, "/")
		types[a.Action][typ] = true
	})
	ctx := context.Background()
	data := &ec2types.RequestLaunchTemplateData{ImageId: awssdk.String(image), SecurityGroupIds: []string{sg},
		KeyName: awssdk.String("ops"), Placement: &ec2types.LaunchTemplatePlacementRequest{GroupName: awssdk.String("spread")},
		BlockDeviceMappings: []ec2types.LaunchTemplateBlockDeviceMappingRequest{{DeviceName: awssdk.String("/dev/xvdb"),
			Ebs: &ec2types.LaunchTemplateEbsBlockDeviceRequest{SnapshotId: awssdk.String("snap-0123456789abcdef0"), VolumeSize: awssdk.Int32(100)}}}}
	if _, err := c.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: awssdk.String("spot"), LaunchTemplateData: data}); err != nil {
		t.Fatal(err)
	}
	tagged := []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: []ec2types.Tag{{Key: awssdk.String("team"), Value: awssdk.String("ml")}}}}
	out, err := c.CreateFleet(ctx, &ec2.CreateFleetInput{Type: ec2types.FleetTypeInstant, TagSpecifications: tagged,
		TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{TotalTargetCapacity: awssdk.Int32(1),
			DefaultTargetCapacityType: ec2types.DefaultTargetCapacityTypeSpot},
		LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
			LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateName: awssdk.String("spot"), Version: awssdk.String("$Latest")},
			Overrides:                   []ec2types.FleetLaunchTemplateOverridesRequest{{InstanceType: "m6i.large", SubnetId: awssdk.String(subnets[0])}}}}})
	if err != nil || len(out.Instances) != 1 {
		t.Fatalf("the spot fleet: %v %+v", err, out)
	}
	if in, _ := e.Instance(out.Instances[0].InstanceIds[0]); !strings.HasPrefix(in.SpotRequestID, "sir-") {
		t.Errorf("a spot instance with spot request %q, want sir-...", in.SpotRequestID)
	}
	createTemplate(t, c, "reserved", images, &ec2types.LaunchTemplateCapacityReservationSpecificationRequest{
		CapacityReservationTarget: &ec2types.CapacityReservationTarget{CapacityReservationId: awssdk.String(reservation)}})
	if id, code := launchFleet(t, c, "reserved", "m6i.large", subnets[0]); id == "" {
		t.Fatalf("the reserved fleet: %s", code)
	}
	mu.Lock()
	defer mu.Unlock()
	want := map[string][]string{
		"ec2:CreateFleet": {"capacity-reservation", "fleet", "image", "instance", "launch-template", "placement-group", "subnet", "volume"},
		"ec2:RunInstances": {"capacity-reservation", "image", "instance", "key-pair", "launch-template", "network-interface",
			"placement-group", "security-group", "snapshot", "spot-instances-request", "subnet", "volume"},
	}
	for action, list := range want {
		got := slices.Sorted(func(yield func(string) bool) {
			for typ := range types[action] {
				if !yield(typ) {
					return
				}
			}
		})
		if !slices.Equal(got, list) {
			t.Errorf("%s authorized on %v, want %v", action, got, list)
		}
	}
}

// TestADeniedLaunchIsAnErrorOfTheFleet: a role may create fleets but run
// only m6i instances; an instant fleet whose first override is a c6i
// answers HTTP 200 with UnauthorizedOperation for it in errors[] and
// launches the m6i, as EC2 reports an instant fleet.
func TestADeniedLaunchIsAnErrorOfTheFleet(t *testing.T) {
	e := awsemu.New(awsemu.DefaultConfig())
	subnets, sg := e.SeedDefaultNetwork("c")
	images := e.SeedEKSImages("1.37")
	admin := client(t, e)
	ctx := context.Background()
	const policy = `{"Version":"2012-10-17","Statement":[
 {"Effect":"Allow","Action":["ec2:CreateFleet","ec2:CreateLaunchTemplate"],"Resource":"*"},
 {"Effect":"Allow","Action":"ec2:RunInstances","NotResource":"arn:aws:ec2:us-east-1:123456789012:instance/*"},
 {"Effect":"Allow","Action":"ec2:RunInstances","Resource":"arn:aws:ec2:us-east-1:123456789012:instance/*",
  "Condition":{"StringLike":{"ec2:InstanceType":"m6i.*"}}}]}`
	adminIAM := iam.NewFromConfig(admin)
	if _, err := adminIAM.CreateRole(ctx, &iam.CreateRoleInput{RoleName: awssdk.String("launcher"), AssumeRolePolicyDocument: awssdk.String(nodeTrust)}); err != nil {
		t.Fatal(err)
	}
	if _, err := adminIAM.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: awssdk.String("launcher"), PolicyName: awssdk.String("p"),
		PolicyDocument: awssdk.String(policy)}); err != nil {
		t.Fatal(err)
	}
	c := ec2.NewFromConfig(asRole(t, e, admin, "launcher", "us-east-1"))
	image := images["/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/recommended/image_id"]
	if _, err := c.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: awssdk.String("lt"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: awssdk.String(image), SecurityGroupIds: []string{sg}}}); err != nil {
		t.Fatal(err)
	}
	out, err := c.CreateFleet(ctx, &ec2.CreateFleetInput{Type: ec2types.FleetTypeInstant,
		TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{TotalTargetCapacity: awssdk.Int32(1),
			DefaultTargetCapacityType: ec2types.DefaultTargetCapacityTypeOnDemand},
		OnDemandOptions: &ec2types.OnDemandOptionsRequest{AllocationStrategy: ec2types.FleetOnDemandAllocationStrategyPrioritized},
		LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
			LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateName: awssdk.String("lt"), Version: awssdk.String("$Latest")},
			Overrides: []ec2types.FleetLaunchTemplateOverridesRequest{
				{InstanceType: "c6i.large", SubnetId: awssdk.String(subnets[0]), Priority: awssdk.Float64(0)},
				{InstanceType: "m6i.large", SubnetId: awssdk.String(subnets[0]), Priority: awssdk.Float64(1)}}}}})
	if err != nil {
		t.Fatalf("a fleet with one denied override: %v, want HTTP 200 with the denial in its errors", err)
	}
	if len(out.Errors) != 1 || awssdk.ToString(out.Errors[0].ErrorCode) != "UnauthorizedOperation" ||
		out.Errors[0].LaunchTemplateAndOverrides.Overrides.InstanceType != "c6i.large" ||
		!strings.Contains(awssdk.ToString(out.Errors[0].ErrorMessage), "is not authorized to perform: ec2:RunInstances on resource: arn:aws:ec2:us-east-1:123456789012:instance/*") {
		t.Errorf("errors %+v, want UnauthorizedOperation for the c6i naming ec2:RunInstances on its instance", out.Errors)
	}
	if len(out.Instances) != 1 || out.Instances[0].InstanceType != "m6i.large" {
		t.Errorf("instances %+v, want the m6i launched", out.Instances)
	}
}
