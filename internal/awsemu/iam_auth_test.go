package awsemu_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

// launchPolicy lets a role launch only m6i instances tagged for cluster c
// from templates of that cluster, in us-east-1, passing only the node role.
const launchPolicy = `{"Version":"2012-10-17","Statement":[
 {"Effect":"Allow","Action":"ec2:Describe*","Resource":"*","Condition":{"StringEquals":{"aws:RequestedRegion":"us-east-1"}}},
 {"Effect":"Allow","Action":["ec2:CreateLaunchTemplate"],"Resource":"arn:aws:ec2:us-east-1:123456789012:launch-template/*",
  "Condition":{"StringEquals":{"aws:RequestTag/stowage.dev/cluster":"c"}}},
 {"Effect":"Allow","Action":"ec2:CreateTags","Resource":"arn:aws:ec2:us-east-1:123456789012:*/*",
  "Condition":{"StringEquals":{"ec2:CreateAction":["CreateFleet","CreateLaunchTemplate"]}}},
 {"Effect":"Allow","Action":["ec2:CreateFleet","ec2:RunInstances"],"Resource":["arn:aws:ec2:us-east-1::image/*","arn:aws:ec2:us-east-1::snapshot/*",
  "arn:aws:ec2:us-east-1:123456789012:subnet/*","arn:aws:ec2:us-east-1:123456789012:security-group/*",
  "arn:aws:ec2:us-east-1:123456789012:network-interface/*"]},
 {"Effect":"Allow","Action":["ec2:CreateFleet","ec2:RunInstances"],"Resource":"arn:aws:ec2:us-east-1:123456789012:launch-template/*",
  "Condition":{"StringEquals":{"aws:ResourceTag/stowage.dev/cluster":"c"}}},
 {"Effect":"Allow","Action":["ec2:CreateFleet","ec2:RunInstances"],"Resource":["arn:aws:ec2:us-east-1:123456789012:fleet/*",
  "arn:aws:ec2:us-east-1:123456789012:volume/*"],"Condition":{"StringEquals":{"aws:RequestTag/kubernetes.io/cluster/c":"owned"}}},
 {"Effect":"Allow","Action":["ec2:CreateFleet","ec2:RunInstances"],"Resource":"arn:aws:ec2:us-east-1:123456789012:instance/*",
  "Condition":{"StringEquals":{"aws:RequestTag/kubernetes.io/cluster/c":"owned"},"StringLike":{"ec2:InstanceType":"m6i.*"}}},
 {"Effect":"Allow","Action":"iam:PassRole","Resource":"arn:aws:iam::123456789012:role/node","Condition":{"StringEquals":{"iam:PassedToService":"ec2.amazonaws.com"}}},
 {"Effect":"Deny","Action":"ec2:TerminateInstances","Resource":"*"}]}`

// asRole returns a configuration that signs with the role's session.
func asRole(t *testing.T, e *awsemu.Emulator, admin awssdk.Config, role, region string) awssdk.Config {
	t.Helper()
	creds, err := e.RoleCredentials(role, "test")
	if err != nil {
		t.Fatal(err)
	}
	cfg := admin.Copy()
	cfg.Region = region
	cfg.Credentials = credentials.NewStaticCredentialsProvider(creds.AccessKeyID, creds.SecretAccessKey, creds.SessionToken)
	return cfg
}

func TestARoleMayDoWhatItsPoliciesAllowAndNothingElse(t *testing.T) {
	e := awsemu.New(awsemu.DefaultConfig())
	subnets, sg := e.SeedDefaultNetwork("c")
	images := e.SeedEKSImages("1.37")
	e.AddRole("node")
	admin := client(t, e)
	ctx := context.Background()
	adminIAM := iam.NewFromConfig(admin)
	for _, step := range []func() error{
		func() error {
			_, err := adminIAM.CreateRole(ctx, &iam.CreateRoleInput{RoleName: awssdk.String("ctrl"), AssumeRolePolicyDocument: awssdk.String(nodeTrust)})
			return err
		},
		func() error {
			_, err := adminIAM.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: awssdk.String("ctrl"), PolicyName: awssdk.String("launch"),
				PolicyDocument: awssdk.String(launchPolicy)})
			return err
		},
		func() error {
			_, err := adminIAM.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: awssdk.String("node")})
			return err
		},
		func() error {
			_, err := adminIAM.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{InstanceProfileName: awssdk.String("node"), RoleName: awssdk.String("node")})
			return err
		},
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var heard []awsemu.Authorization
	e.OnAuthorize(func(a awsemu.Authorization) {
		mu.Lock()
		defer mu.Unlock()
		if a.Role == "ctrl" {
			heard = append(heard, a)
		}
	})
	c := ec2.NewFromConfig(asRole(t, e, admin, "ctrl", "us-east-1"))
	if _, err := c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{}); err != nil {
		t.Fatalf("describing in the allowed region: %v", err)
	}
	_, err := ec2.NewFromConfig(asRole(t, e, admin, "ctrl", "eu-west-1")).DescribeInstances(ctx, &ec2.DescribeInstancesInput{})
	if code(err) != "UnauthorizedOperation" || !strings.Contains(err.Error(), "is not authorized to perform: ec2:DescribeInstances") {
		t.Errorf("describing from another region: %v, want UnauthorizedOperation naming ec2:DescribeInstances", err)
	}
	var image string
	for _, id := range images {
		image = id
		break
	}
	template := func(tags map[string]string) (string, error) {
		var tagList []ec2types.Tag
		for k, v := range tags {
			tagList = append(tagList, ec2types.Tag{Key: awssdk.String(k), Value: awssdk.String(v)})
		}
		out, err := c.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: awssdk.String("lt-" + tags["stowage.dev/cluster"]),
			LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: awssdk.String(image), SecurityGroupIds: []string{sg},
				IamInstanceProfile: &ec2types.LaunchTemplateIamInstanceProfileSpecificationRequest{Name: awssdk.String("node")}},
			TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate, Tags: tagList}}})
		if err != nil {
			return "", err
		}
		return awssdk.ToString(out.LaunchTemplate.LaunchTemplateName), nil
	}
	if _, err := template(map[string]string{"stowage.dev/cluster": "other"}); code(err) != "UnauthorizedOperation" {
		t.Errorf("a template of another cluster: %v, want UnauthorizedOperation", err)
	}
	lt, err := template(map[string]string{"stowage.dev/cluster": "c"})
	if err != nil {
		t.Fatalf("a template of the cluster: %v", err)
	}
	fleet := func(instanceType string, tags map[string]string) error {
		var tagList []ec2types.Tag
		for k, v := range tags {
			tagList = append(tagList, ec2types.Tag{Key: awssdk.String(k), Value: awssdk.String(v)})
		}
		_, err := c.CreateFleet(ctx, &ec2.CreateFleetInput{Type: ec2types.FleetTypeInstant,
			LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
				LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateName: awssdk.String(lt), Version: awssdk.String("$Latest")},
				Overrides:                   []ec2types.FleetLaunchTemplateOverridesRequest{{InstanceType: ec2types.InstanceType(instanceType), SubnetId: awssdk.String(subnets[0])}}}},
			TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{TotalTargetCapacity: awssdk.Int32(1), DefaultTargetCapacityType: ec2types.DefaultTargetCapacityTypeOnDemand},
			TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: tagList},
				{ResourceType: ec2types.ResourceTypeVolume, Tags: tagList}, {ResourceType: ec2types.ResourceTypeFleet, Tags: tagList}}})
		return err
	}
	owned := map[string]string{"kubernetes.io/cluster/c": "owned"}
	if err := fleet("m6i.large", owned); err != nil {
		t.Fatalf("launching an allowed type, tagged for the cluster: %v", err)
	}
	for _, tc := range []struct {
		name, instanceType string
		tags               map[string]string
		action             string
	}{
		{"a type outside the policy", "c6i.large", owned, "on resource: arn:aws:ec2:us-east-1:123456789012:instance/*"},
		{"untagged", "m6i.large", nil, "on resource: arn:aws:ec2:us-east-1:123456789012:fleet/*"},
	} {
		if err := fleet(tc.instanceType, tc.tags); code(err) != "UnauthorizedOperation" || !strings.Contains(err.Error(), tc.action) {
			t.Errorf("%s: %v, want UnauthorizedOperation %s", tc.name, err, tc.action)
		}
	}
	if n := len(e.Instances()); n != 1 {
		t.Errorf("%d instances, want only the allowed launch's", n)
	}
	id := e.Instances()[0].ID
	_, err = c.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}})
	if code(err) != "UnauthorizedOperation" || !strings.Contains(err.Error(), "explicit deny") {
		t.Errorf("terminating under an explicit deny: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := map[string]bool{"ec2:RunInstances": false, "iam:PassRole": false, "ec2:CreateTags": false}
	for _, a := range heard {
		if _, ok := want[a.Action]; ok && a.Allowed {
			want[a.Action] = true
		}
		if a.Action == "iam:PassRole" && (a.Resource != "arn:aws:iam::123456789012:role/node" || a.Context["iam:passedtoservice"][0] != "ec2.amazonaws.com") {
			t.Errorf("PassRole authorized on %s with %v", a.Resource, a.Context)
		}
	}
	for action, seen := range want {
		if !seen {
			t.Errorf("the launch was never authorized for %s, which AWS checks on a launch", action)
		}
	}
}
