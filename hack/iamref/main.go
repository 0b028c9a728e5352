// Command iamref writes the AWS emulator's authorization tables from AWS's
// published IAM data, as make tools installs it (internal/iamcheck):
// internal/awsemu/zz_generated.iamreference.go (the Service Authorization
// Reference for the actions the emulator serves or authorizes) and
// internal/awsemu/zz_generated.managedpolicies.go (AWS's managed policies).
// `go run ./hack/iamref` after a new lock or a new action; the emulator's
// tests fail while the files are not what this writes.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/stowage-dev/stowage/internal/iamcheck/reference"
	"github.com/stowage-dev/stowage/internal/testenv"
)

// actions are, per service, those the emulator serves and those AWS
// authorizes on their behalf (an instant fleet's RunInstances, tags at
// creation, a passed role, a service-linked role created on first use). The
// emulator refuses, as an internal error, to authorize an action missing here.
var actions = map[string][]string{
	"arc-zonal-shift": {"CancelZonalShift", "GetManagedResource", "ListAutoshifts", "ListZonalShifts", "StartZonalShift", "UpdateZonalShift"},
	"ec2": {"CreateFleet", "CreateLaunchTemplate", "CreateTags", "DeleteLaunchTemplate", "DescribeAvailabilityZones",
		"DescribeCapacityReservations", "DescribeImages", "DescribeInstanceTypeOfferings", "DescribeInstanceTypes",
		"DescribeInstances", "DescribeLaunchTemplates", "DescribeSecurityGroups", "DescribeSpotPriceHistory", "DescribeSubnets",
		"RunInstances", "TerminateInstances"},
	"eks": {"CreateAccessEntry", "CreatePodIdentityAssociation", "DeleteAccessEntry", "DeletePodIdentityAssociation",
		"DescribeAccessEntry", "DescribeCluster", "DescribePodIdentityAssociation", "ListAccessEntries",
		"ListPodIdentityAssociations", "UpdateAccessEntry", "UpdatePodIdentityAssociation"},
	"events": {"DeleteRule", "DescribeRule", "ListTargetsByRule", "PutEvents", "PutRule", "PutTargets", "RemoveTargets", "TagResource"},
	"iam": {"AddRoleToInstanceProfile", "AttachRolePolicy", "AttachUserPolicy", "CreateAccessKey", "CreateInstanceProfile",
		"CreateOpenIDConnectProvider", "CreateRole", "CreateServiceLinkedRole", "CreateUser", "DeleteAccessKey",
		"DeleteInstanceProfile", "DeleteOpenIDConnectProvider", "DeleteRole", "DeleteRolePolicy", "DeleteUser", "DeleteUserPolicy",
		"DetachRolePolicy", "DetachUserPolicy", "GetInstanceProfile", "GetOpenIDConnectProvider", "GetPolicy", "GetRole",
		"GetRolePolicy", "GetUser", "GetUserPolicy", "ListAccessKeys", "ListAttachedRolePolicies", "ListAttachedUserPolicies",
		"ListInstanceProfileTags", "ListInstanceProfiles", "ListInstanceProfilesForRole", "ListRolePolicies", "ListUserPolicies",
		"PassRole", "PutRolePolicy", "PutUserPolicy", "RemoveRoleFromInstanceProfile", "TagInstanceProfile", "TagRole",
		"TagUser", "UntagRole", "UpdateAssumeRolePolicy", "UpdateRole"},
	"lambda": {"CreateEventSourceMapping", "CreateFunction", "DeleteEventSourceMapping", "DeleteFunction",
		"GetEventSourceMapping", "GetFunction", "InvokeFunction", "ListEventSourceMappings", "PassCapacityProvider", "TagResource",
		"UpdateEventSourceMapping", "UpdateFunctionCode", "UpdateFunctionConfiguration"},
	"logs": {"CreateLogGroup", "DeleteLogGroup", "DeleteRetentionPolicy", "DescribeLogGroups", "ListTagsForResource",
		"PutRetentionPolicy", "TagResource", "UntagResource"},
	"pricing": {"GetProducts"},
	"sqs": {"CreateQueue", "DeleteMessage", "DeleteQueue", "GetQueueAttributes", "GetQueueUrl", "ListQueueTags", "ListQueues",
		"PurgeQueue", "ReceiveMessage", "SendMessage", "SetQueueAttributes", "TagQueue", "UntagQueue"},
	"ssm": {"GetParameter", "PutParameter"},
	"sts": {"AssumeRoleWithWebIdentity", "GetCallerIdentity", "TagSession"},
}

// documentedPolicies are the AWS managed policies whose documents the
// emulator evaluates: those Stowage's node and Lambda roles attach, the
// minimal node policies a module input may choose, and the administrator's.
var documentedPolicies = []string{"AdministratorAccess", "AmazonEC2ContainerRegistryPullOnly", "AmazonEC2ContainerRegistryReadOnly",
	"AmazonEKSWorkerNodeMinimalPolicy", "AmazonEKSWorkerNodePolicy", "AmazonEKS_CNI_Policy", "AmazonSSMManagedInstanceCore",
	"AWSLambdaBasicExecutionRole", "AWSLambdaSQSQueueExecutionRole", "AWSLambdaVPCAccessExecutionRole"}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "iamref:", err)
		os.Exit(1)
	}
}

func run() error {
	modules, err := testenv.IAMCheckModules()
	if err != nil {
		return err
	}
	table, err := reference.Table(modules, actions)
	if err != nil {
		return err
	}
	managed, err := reference.ManagedPolicies(modules, documentedPolicies)
	if err != nil {
		return err
	}
	dir := filepath.Join("internal", "awsemu")
	if err := os.WriteFile(filepath.Join(dir, "zz_generated.iamreference.go"), table, 0o644); err != nil { //nolint:gosec // source
		return err
	}
	return os.WriteFile(filepath.Join(dir, "zz_generated.managedpolicies.go"), managed, 0o644) //nolint:gosec // source
}
