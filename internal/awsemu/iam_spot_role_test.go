package awsemu_test

import (
	"context"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

// TestTheFirstSpotLaunchNeedsToCreateTheSpotRole: in an account without
// AWSServiceRoleForEC2Spot, a caller that may launch but not create the role
// gets AuthFailure.ServiceLinkedRoleCreationNotPermitted for its spot
// launch, in the fleet's errors, and on-demand launches as before; once it
// may create the role (iam:CreateServiceLinkedRole for spot.amazonaws.com),
// its spot launch creates it.
func TestTheFirstSpotLaunchNeedsToCreateTheSpotRole(t *testing.T) {
	cfg := awsemu.DefaultConfig()
	cfg.NoSpotServiceLinkedRole = true
	e := awsemu.New(cfg)
	subnets, sg := e.SeedDefaultNetwork("c")
	images := e.SeedEKSImages("1.37")
	admin := client(t, e)
	ctx := context.Background()
	adminIAM := iam.NewFromConfig(admin)
	put := func(name, doc string) {
		if _, err := adminIAM.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: awssdk.String("launcher"), PolicyName: awssdk.String(name),
			PolicyDocument: awssdk.String(doc)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := adminIAM.CreateRole(ctx, &iam.CreateRoleInput{RoleName: awssdk.String("launcher"), AssumeRolePolicyDocument: awssdk.String(nodeTrust)}); err != nil {
		t.Fatal(err)
	}
	put("launch", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["ec2:CreateFleet","ec2:RunInstances","ec2:CreateLaunchTemplate"],"Resource":"*"}]}`)
	c := ec2.NewFromConfig(asRole(t, e, admin, "launcher", "us-east-1"))
	image := images["/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/recommended/image_id"]
	if _, err := c.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: awssdk.String("lt"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: awssdk.String(image), SecurityGroupIds: []string{sg}}}); err != nil {
		t.Fatal(err)
	}
	fleet := func(capacityType ec2types.DefaultTargetCapacityType) *ec2.CreateFleetOutput {
		out, err := c.CreateFleet(ctx, &ec2.CreateFleetInput{Type: ec2types.FleetTypeInstant,
			TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{TotalTargetCapacity: awssdk.Int32(1),
				DefaultTargetCapacityType: capacityType},
			LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
				LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateName: awssdk.String("lt"), Version: awssdk.String("$Latest")},
				Overrides:                   []ec2types.FleetLaunchTemplateOverridesRequest{{InstanceType: "m6i.large", SubnetId: awssdk.String(subnets[0])}}}}})
		if err != nil {
			t.Fatalf("a %s fleet: %v, want HTTP 200", capacityType, err)
		}
		return out
	}
	out := fleet(ec2types.DefaultTargetCapacityTypeSpot)
	if len(out.Instances) != 0 || len(out.Errors) != 1 || awssdk.ToString(out.Errors[0].ErrorCode) != awsemu.CodeSpotRoleNotPermitted {
		t.Errorf("a spot launch that may not create the spot role: %+v %+v, want %s", out.Instances, out.Errors, awsemu.CodeSpotRoleNotPermitted)
	}
	if out := fleet(ec2types.DefaultTargetCapacityTypeOnDemand); len(out.Instances) != 1 {
		t.Errorf("an on-demand launch: %+v, want it launched", out.Errors)
	}
	if e.SpotServiceLinkedRoleExists() {
		t.Fatal("the spot role exists though nobody could create it")
	}
	put("spot-role", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"iam:CreateServiceLinkedRole","Resource":"*",
 "Condition":{"StringEquals":{"iam:AWSServiceName":"spot.amazonaws.com"}}}]}`)
	if out := fleet(ec2types.DefaultTargetCapacityTypeSpot); len(out.Instances) != 1 || !e.SpotServiceLinkedRoleExists() {
		t.Errorf("a spot launch that may create the spot role: %+v, role created %t", out.Errors, e.SpotServiceLinkedRoleExists())
	}
}
