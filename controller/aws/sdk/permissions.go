package sdk

// Scope says on which resources, and under which conditions, the controller's
// generated IAM policy (controller/aws/iampolicy) grants an action.
type Scope string

// The scopes, from the loosest to the narrowest.
const (
	// ScopeRegionalRead is a read without resource-level permissions, on "*",
	// pinned to the cluster's region by aws:RequestedRegion.
	ScopeRegionalRead Scope = "regional-read"
	// ScopePrices is the Pricing API: read-only, global, on "*".
	ScopePrices Scope = "prices"
	// ScopePublicParameters is SSM's public parameters (/aws/service/...) of the region.
	ScopePublicParameters Scope = "public-parameters"
	// ScopeLaunch is a launch: the region's images and their snapshots, subnets,
	// security groups, network interfaces, spot requests and capacity
	// reservations; the cluster's launch templates (aws:ResourceTag); and
	// fleets, volumes and instances tagged at creation for the cluster and its
	// pools (aws:RequestTag), instances only of the pools' instance types
	// (ec2:InstanceType).
	ScopeLaunch Scope = "launch"
	// ScopeTagOnCreate is ec2:CreateTags, only as part of the calls that create
	// the cluster's fleets, instances, volumes and launch templates (ec2:CreateAction).
	ScopeTagOnCreate Scope = "tag-on-create"
	// ScopeClusterTemplates is creating and deleting the launch templates tagged
	// stowage.dev/cluster with the cluster's name.
	ScopeClusterTemplates Scope = "cluster-templates"
	// ScopeClusterInstances is terminating instances tagged as the cluster's and
	// a pool's.
	ScopeClusterInstances Scope = "cluster-instances"
	// ScopeInstanceProfileRead is reading instance profiles of the account.
	ScopeInstanceProfileRead Scope = "instance-profile-read"
	// ScopeClusterInstanceProfiles is creating, tagging and filling the
	// instance profiles tagged as the cluster's.
	ScopeClusterInstanceProfiles Scope = "cluster-instance-profiles"
	// ScopePassNodeRole is iam:PassRole of the node role, to EC2 only.
	ScopePassNodeRole Scope = "pass-node-role"
	// ScopeCluster is reading the cluster Stowage runs in, by its ARN.
	ScopeCluster Scope = "cluster"
	// ScopeZonalShiftRead is listing ARC's zonal shifts, which takes no
	// resource-level permissions: on "*", pinned to the cluster's region by
	// aws:RequestedRegion.
	ScopeZonalShiftRead Scope = "zonal-shift-read"
	// ScopeClusterManagedResource is reading the cluster as ARC manages it:
	// on "*" (the Service Authorization Reference lists no EKS resource type
	// for ARC) where arc-zonal-shift:ResourceIdentifier is the cluster's ARN,
	// as ARC's IAM guide scopes EKS clusters.
	ScopeClusterManagedResource Scope = "cluster-managed-resource"
)

// Permission is one IAM action the AWS layer needs.
type Permission struct {
	// Action is the IAM action, e.g. ec2:CreateFleet.
	Action string
	// Scope is how the generated policy narrows it.
	Scope Scope
	// On names the call AWS authorizes Action for when Action is not one of the
	// interfaces' methods: an instant fleet launches with the caller's
	// ec2:RunInstances, tags at creation with its ec2:CreateTags, and passes the
	// node role with its iam:PassRole. Empty for the methods themselves.
	On string
}

// Permissions lists every IAM action Stowage's controller needs: one per
// method of the interfaces above (the same name under the service's prefix),
// and those AWS authorizes on their behalf. The generated policy grants these
// and nothing else; tests check the list against the interfaces and against
// the authorizations the emulator makes for the AWS layer's calls.
var Permissions = []Permission{
	{Action: "ec2:DescribeInstanceTypes", Scope: ScopeRegionalRead},
	{Action: "ec2:DescribeInstanceTypeOfferings", Scope: ScopeRegionalRead},
	{Action: "ec2:DescribeSpotPriceHistory", Scope: ScopeRegionalRead},
	{Action: "ec2:DescribeSubnets", Scope: ScopeRegionalRead},
	{Action: "ec2:DescribeSecurityGroups", Scope: ScopeRegionalRead},
	{Action: "ec2:DescribeImages", Scope: ScopeRegionalRead},
	{Action: "ec2:DescribeLaunchTemplates", Scope: ScopeRegionalRead},
	{Action: "ec2:DescribeInstances", Scope: ScopeRegionalRead},
	{Action: "ec2:DescribeCapacityReservations", Scope: ScopeRegionalRead},
	{Action: "ec2:CreateLaunchTemplate", Scope: ScopeClusterTemplates},
	{Action: "ec2:DeleteLaunchTemplate", Scope: ScopeClusterTemplates},
	{Action: "ec2:CreateFleet", Scope: ScopeLaunch},
	{Action: "ec2:RunInstances", Scope: ScopeLaunch, On: "ec2:CreateFleet"},
	{Action: "ec2:CreateTags", Scope: ScopeTagOnCreate, On: "ec2:CreateFleet"},
	{Action: "ec2:TerminateInstances", Scope: ScopeClusterInstances},
	{Action: "ssm:GetParameter", Scope: ScopePublicParameters},
	{Action: "pricing:GetProducts", Scope: ScopePrices},
	{Action: "iam:GetInstanceProfile", Scope: ScopeInstanceProfileRead},
	{Action: "iam:CreateInstanceProfile", Scope: ScopeClusterInstanceProfiles},
	{Action: "iam:TagInstanceProfile", Scope: ScopeClusterInstanceProfiles, On: "iam:CreateInstanceProfile"},
	{Action: "iam:AddRoleToInstanceProfile", Scope: ScopeClusterInstanceProfiles},
	{Action: "iam:PassRole", Scope: ScopePassNodeRole, On: "ec2:CreateFleet"},
	{Action: "eks:DescribeCluster", Scope: ScopeCluster},
	{Action: "arc-zonal-shift:ListZonalShifts", Scope: ScopeZonalShiftRead},
	{Action: "arc-zonal-shift:GetManagedResource", Scope: ScopeClusterManagedResource},
}
