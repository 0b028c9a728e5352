package aws_test

import (
	"slices"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/instance"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

// TestPublicIPAndIMDSOverIPv6ReachTheLaunchTemplate: associatePublicIPAddress
// goes through the primary network interface, which then carries the
// security groups (the template's own list left empty, as EC2 requires),
// and httpProtocolIPv6 through the metadata options; the instance launches
// with the class's security group.
func TestPublicIPAndIMDSOverIPv6ReachTheLaunchTemplate(t *testing.T) {
	e := newEnv(t, awsemu.SmallCatalogue(), 3)
	e.nc.Spec.AssociatePublicIPAddress = ptr.To(false)
	e.nc.Spec.MetadataOptions = &v1alpha1.MetadataOptions{HTTPProtocolIPv6: ptr.To("enabled")}
	claim, err := e.cp.Create(ctx(t), nodeClaim("public", []string{"m6i.large"}, []string{"on-demand"}))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	lts := e.emu.LaunchTemplates()
	if len(lts) != 1 {
		t.Fatalf("%d launch templates, want 1", len(lts))
	}
	lt := lts[0]
	if len(lt.SecurityGroups) != 0 || len(lt.NetworkInterfaces) != 1 || lt.HTTPProtocolIPv6 != "enabled" {
		t.Fatalf("template: security groups %v, network interfaces %+v, IMDS over IPv6 %q", lt.SecurityGroups, lt.NetworkInterfaces, lt.HTTPProtocolIPv6)
	}
	ni := lt.NetworkInterfaces[0]
	if ni.DeviceIndex != 0 || ni.AssociatePublicIP == nil || *ni.AssociatePublicIP || !slices.Equal(ni.Groups, []string{e.sg}) {
		t.Errorf("primary interface %+v, want index 0, no public IP, groups [%s]", ni, e.sg)
	}
	id, _ := instance.ParseProviderID(claim.Status.ProviderID)
	if in, _ := e.emu.Instance(id); !slices.Equal(in.SecurityGroups, []string{e.sg}) {
		t.Errorf("instance security groups %v, want [%s]", in.SecurityGroups, e.sg)
	}
}

// TestEC2RefusesSecurityGroupsBesideNetworkInterfaces: the emulator refuses
// a launch from a template naming both, as EC2 does.
func TestEC2RefusesSecurityGroupsBesideNetworkInterfaces(t *testing.T) {
	e := newEnv(t, awsemu.SmallCatalogue(), 1)
	out, err := e.clients.EC2.CreateLaunchTemplate(ctx(t), &ec2.CreateLaunchTemplateInput{LaunchTemplateName: awssdk.String("both"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: awssdk.String(e.images["/aws/service/eks/optimized-ami/"+k8sVersion+"/amazon-linux-2023/x86_64/standard/recommended/image_id"]), SecurityGroupIds: []string{e.sg},
			NetworkInterfaces: []ec2types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest{{DeviceIndex: awssdk.Int32(0), AssociatePublicIpAddress: awssdk.Bool(true)}}}})
	if err != nil {
		t.Fatal(err)
	}
	fleet, err := e.clients.EC2.CreateFleet(ctx(t), &ec2.CreateFleetInput{Type: ec2types.FleetTypeInstant,
		TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{TotalTargetCapacity: awssdk.Int32(1),
			DefaultTargetCapacityType: ec2types.DefaultTargetCapacityTypeOnDemand},
		LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
			LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateId: out.LaunchTemplate.LaunchTemplateId, Version: awssdk.String("$Latest")},
			Overrides:                   []ec2types.FleetLaunchTemplateOverridesRequest{{InstanceType: "m6i.large", SubnetId: awssdk.String(e.subnets[0])}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(fleet.Instances) != 0 || len(fleet.Errors) != 1 || awssdk.ToString(fleet.Errors[0].ErrorCode) != "InvalidParameterCombination" {
		t.Errorf("fleet launched %v with errors %+v, want InvalidParameterCombination", fleet.Instances, fleet.Errors)
	}
}
