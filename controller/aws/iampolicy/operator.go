package iampolicy

import (
	"slices"
	"strings"
)

// OperatorPermissions lists, for the provider block and each resource and
// data source of the Terraform provider that calls AWS, the IAM actions its calls need (and those AWS
// authorizes on their behalf: tags at creation, a passed role): what the
// person or pipeline running terraform apply needs. The provider's
// acceptance tests and modules/moduletest run as an IAM user holding
// exactly Operator's policy, so a call missing here fails a test.
var OperatorPermissions = map[string][]string{
	// The provider block with eks_cluster_name reads the cluster's endpoint.
	"provider": {"eks:DescribeCluster"},
	"stowage_node_role": {"iam:CreateRole", "iam:TagRole", "iam:UntagRole", "iam:GetRole", "iam:UpdateRole", "iam:DeleteRole",
		"iam:AttachRolePolicy", "iam:DetachRolePolicy", "iam:ListAttachedRolePolicies", "iam:ListRolePolicies", "iam:DeleteRolePolicy",
		"iam:CreateInstanceProfile", "iam:TagInstanceProfile", "iam:GetInstanceProfile", "iam:AddRoleToInstanceProfile",
		"iam:RemoveRoleFromInstanceProfile", "iam:DeleteInstanceProfile", "iam:PassRole"},
	"stowage_controller_role": {"iam:CreateRole", "iam:TagRole", "iam:UntagRole", "iam:GetRole", "iam:UpdateRole",
		"iam:UpdateAssumeRolePolicy", "iam:DeleteRole", "iam:PutRolePolicy", "iam:GetRolePolicy", "iam:DeleteRolePolicy",
		"iam:ListRolePolicies", "iam:ListAttachedRolePolicies", "iam:DetachRolePolicy", "eks:DescribeCluster",
		"eks:CreatePodIdentityAssociation", "eks:DescribePodIdentityAssociation", "eks:ListPodIdentityAssociations",
		"eks:DeletePodIdentityAssociation", "iam:PassRole"},
	"stowage_interruption_queue": {"sqs:CreateQueue", "sqs:GetQueueUrl", "sqs:GetQueueAttributes", "sqs:SetQueueAttributes",
		"sqs:TagQueue", "sqs:UntagQueue", "sqs:ListQueueTags", "sqs:DeleteQueue", "events:PutRule", "events:DescribeRule",
		"events:DeleteRule", "events:PutTargets", "events:RemoveTargets", "events:ListTargetsByRule", "events:TagResource"},
	"stowage_interruption_handler": {"lambda:CreateFunction", "lambda:GetFunction", "lambda:UpdateFunctionCode",
		"lambda:UpdateFunctionConfiguration", "lambda:DeleteFunction", "lambda:TagResource", "lambda:CreateEventSourceMapping",
		"lambda:ListEventSourceMappings", "lambda:UpdateEventSourceMapping", "lambda:DeleteEventSourceMapping",
		"logs:CreateLogGroup", "logs:DescribeLogGroups", "logs:PutRetentionPolicy", "logs:DeleteLogGroup", "logs:TagResource",
		"iam:CreateRole", "iam:TagRole", "iam:UntagRole", "iam:GetRole", "iam:UpdateAssumeRolePolicy", "iam:PutRolePolicy",
		"iam:GetRolePolicy", "iam:DeleteRolePolicy", "iam:ListRolePolicies", "iam:ListAttachedRolePolicies", "iam:DetachRolePolicy",
		"iam:DeleteRole", "iam:PassRole", "eks:CreateAccessEntry", "eks:DescribeAccessEntry", "eks:UpdateAccessEntry",
		"eks:DeleteAccessEntry"},
	"stowage_spot_service_linked_role": {"iam:CreateServiceLinkedRole", "iam:GetRole"},
	// stowage_instance_types with catalogue = "aws" reads the region's
	// catalogue as the controller does.
	"stowage_instance_types": {"ec2:DescribeInstanceTypes", "ec2:DescribeInstanceTypeOfferings", "ec2:DescribeSpotPriceHistory",
		"ec2:DescribeCapacityReservations", "pricing:GetProducts"},
	// stowage_controller's destroy removes what the controller made: its
	// launch templates and instance profiles.
	"stowage_controller": {"ec2:DescribeLaunchTemplates", "ec2:DeleteLaunchTemplate", "iam:ListInstanceProfiles",
		"iam:ListInstanceProfileTags", "iam:ListInstanceProfilesForRole", "iam:RemoveRoleFromInstanceProfile",
		"iam:DeleteInstanceProfile"},
}

// Operator is the policy of whoever runs terraform apply with Stowage's
// provider: one statement per resource (and the provider block), each with
// the actions OperatorPermissions lists for it.
func Operator() Document {
	names := make([]string, 0, len(OperatorPermissions))
	for name := range OperatorPermissions {
		names = append(names, name)
	}
	slices.Sort(names)
	d := Document{Version: Version}
	for _, name := range names {
		actions := slices.Sorted(slices.Values(dedupe(OperatorPermissions[name])))
		d.Statement = append(d.Statement, Statement{Sid: sid(name), Effect: "Allow", Action: actions, Resource: []string{"*"}})
	}
	return d
}

// sid turns stowage_node_role into StowageNodeRole.
func sid(name string) string {
	var b strings.Builder
	for _, part := range strings.Split(name, "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}
