package iampolicy

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/stowage-dev/stowage/controller/aws/sdk"
)

// Quotas on a policy's size, in characters other than white space.
const (
	// InlineQuota is IAM's limit on all of a role's inline policies together.
	InlineQuota = 10240
	// ManagedQuota is IAM's limit on one managed policy.
	ManagedQuota = 6144
)

// The tags Stowage puts on what it creates (controller/aws/instance and launchtemplate).
const (
	tagClusterPrefix = "kubernetes.io/cluster/"
	tagNodePool      = "stowage.dev/nodepool"
	tagTemplates     = "stowage.dev/cluster"
)

// ControllerConfig is what the controller's policy is scoped to. Each field
// names the attribute of stowage_controller_policy it comes from.
type ControllerConfig struct {
	Partition string // "aws" when empty
	Region    string // region
	AccountID string // account_id
	Cluster   string // cluster_name
	// NodeRoleARNs are the roles the controller passes to EC2 (node_role_arns).
	NodeRoleARNs []string
	// NodePools are the pools it may launch for (node_pools); empty: any
	// pool, though instances must still carry the pool tag.
	NodePools []string
	// InstanceTypes are the types it may launch; empty: any type.
	InstanceTypes []string
	// MaxSize is the quota the document must fit; InlineQuota when zero.
	MaxSize int
}

var (
	accountPattern      = regexp.MustCompile(`^[0-9]{12}$`)
	regionPattern       = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]$`)
	instanceTypePattern = regexp.MustCompile(`^[a-z0-9-]+\.[a-z0-9-]+$`)
)

// Validate reports every field that is wrong, naming it and the fix.
func (c ControllerConfig) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}
	if !regionPattern.MatchString(c.Region) {
		bad("region", "%q is not a region: use one such as us-east-1", c.Region)
	}
	if !accountPattern.MatchString(c.AccountID) {
		bad("account_id", "%q is not an account id: use the 12 digits of the cluster's account", c.AccountID)
	}
	if c.Cluster == "" || len(c.Cluster) > 100 || strings.ContainsAny(c.Cluster, " *?\"") {
		bad("cluster_name", "%q is not an EKS cluster name: use the name as the cluster's tags carry it", c.Cluster)
	}
	if len(c.NodeRoleARNs) == 0 {
		bad("node_role_arns", "at least one node role is needed: the ARN of the role nodes run as (stowage_node_role's arn)")
	}
	for i, arn := range c.NodeRoleARNs {
		if !strings.HasPrefix(arn, "arn:"+c.partition()+":iam::"+c.AccountID+":role/") || strings.ContainsAny(arn, "*?") {
			bad(fmt.Sprintf("node_role_arns[%d]", i), "%q is not a role of account %s: use arn:%s:iam::%s:role/<name>, no wildcards",
				arn, c.AccountID, c.partition(), c.AccountID)
		}
	}
	for i, p := range c.NodePools {
		for _, msg := range validation.IsDNS1123Subdomain(p) {
			bad(fmt.Sprintf("node_pools[%d]", i), "%q is not a pool name: %s", p, msg)
		}
	}
	for i, t := range c.InstanceTypes {
		if !instanceTypePattern.MatchString(t) {
			bad(fmt.Sprintf("instance_types[%d]", i), "%q is not an instance type: use one such as m6i.large", t)
		}
	}
	return errors.Join(errs...)
}

func (c ControllerConfig) partition() string {
	if c.Partition == "" {
		return "aws"
	}
	return c.Partition
}

// Controller generates the controller's policy: every action of
// sdk.Permissions, each on its scope's resources and conditions. The
// instance types are listed as they are when the document fits the quota,
// and as family wildcards (m6i.*) when only that fits; an error says when
// neither does.
func Controller(c ControllerConfig) (Document, error) {
	if err := c.Validate(); err != nil {
		return Document{}, err
	}
	limit := c.MaxSize
	if limit == 0 {
		limit = InlineQuota
	}
	types := slices.Sorted(slices.Values(dedupe(c.InstanceTypes)))
	d := c.document(types, "StringEquals")
	if d.Size() <= limit {
		return d, nil
	}
	d = c.document(families(types), "StringLike")
	if d.Size() <= limit {
		return d, nil
	}
	return Document{}, fmt.Errorf("instance_types: the policy takes %d characters with the %d families of the %d types, over the quota of %d; "+
		"narrow the pools' requirements, or split the pools between clusters", d.Size(), len(families(types)), len(types), limit)
}

func dedupe(list []string) []string {
	var out []string
	for _, s := range list {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// families turns types into one wildcard per family: m6i.large -> m6i.*.
func families(types []string) []string {
	var out []string
	for _, t := range types {
		f, _, _ := strings.Cut(t, ".")
		if w := f + ".*"; !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// actionsOf lists the permissions of a scope, in the list's order; with
// verbs, only those whose action name starts with one (Create, Delete...).
func actionsOf(scope sdk.Scope, verbs ...string) []string {
	var out []string
	for _, p := range sdk.Permissions {
		_, name, _ := strings.Cut(p.Action, ":")
		if p.Scope == scope && (len(verbs) == 0 || slices.ContainsFunc(verbs, func(v string) bool { return strings.HasPrefix(name, v) })) {
			out = append(out, p.Action)
		}
	}
	return out
}

func (c ControllerConfig) ec2(typ string) string {
	if typ == "image" || typ == "snapshot" { // AWS's public images and their snapshots name no account
		return "arn:" + c.partition() + ":ec2:" + c.Region + "::" + typ + "/*"
	}
	return "arn:" + c.partition() + ":ec2:" + c.Region + ":" + c.AccountID + ":" + typ + "/*"
}

// createdForPools are the conditions on what a launch creates: tagged as the
// cluster's, and as one of its pools'.
func (c ControllerConfig) createdForPools() Conditions {
	cond := Conditions{}.with("StringEquals", "aws:RequestTag/"+tagClusterPrefix+c.Cluster, "owned")
	if len(c.NodePools) == 0 {
		return cond.with("StringLike", "aws:RequestTag/"+tagNodePool, "*")
	}
	return cond.with("StringEquals", "aws:RequestTag/"+tagNodePool, slices.Sorted(slices.Values(dedupe(c.NodePools)))...)
}

func (c ControllerConfig) document(types []string, typeOperator string) Document {
	launch := actionsOf(sdk.ScopeLaunch)
	instances := c.createdForPools()
	if len(types) > 0 {
		instances = instances.with(typeOperator, "ec2:InstanceType", types...)
	}
	iamARN := func(kind string) string { return "arn:" + c.partition() + ":iam::" + c.AccountID + ":" + kind + "/*" }
	templates := Conditions{}.with("StringEquals", "aws:RequestTag/"+tagTemplates, c.Cluster)
	return Document{Version: Version, Statement: []Statement{
		{Sid: "RegionalReads", Action: actionsOf(sdk.ScopeRegionalRead), Resource: []string{"*"},
			Condition: Conditions{}.with("StringEquals", "aws:RequestedRegion", c.Region)},
		{Sid: "Prices", Action: actionsOf(sdk.ScopePrices), Resource: []string{"*"}},
		{Sid: "PublicImageParameters", Action: actionsOf(sdk.ScopePublicParameters),
			Resource: []string{"arn:" + c.partition() + ":ssm:" + c.Region + "::parameter/aws/service/*"}},
		{Sid: "LaunchInTheRegion", Action: launch, Resource: []string{c.ec2("image"), c.ec2("snapshot"), c.ec2("subnet"),
			c.ec2("security-group"), c.ec2("network-interface"), c.ec2("spot-instances-request"), c.ec2("capacity-reservation")}},
		{Sid: "LaunchFromTheClustersTemplates", Action: launch, Resource: []string{c.ec2("launch-template")},
			Condition: Conditions{}.with("StringEquals", "aws:ResourceTag/"+tagTemplates, c.Cluster)},
		{Sid: "CreateFleetsAndVolumesForThePools", Action: launch, Resource: []string{c.ec2("fleet"), c.ec2("volume")},
			Condition: c.createdForPools()},
		{Sid: "LaunchThePoolsInstanceTypes", Action: launch, Resource: []string{c.ec2("instance")}, Condition: instances},
		{Sid: "TagWhatLaunchesCreate", Action: actionsOf(sdk.ScopeTagOnCreate),
			Resource:  []string{c.ec2("fleet"), c.ec2("instance"), c.ec2("volume")},
			Condition: c.createdForPools().with("StringEquals", "ec2:CreateAction", "CreateFleet")},
		{Sid: "TagTheClustersTemplatesAtCreation", Action: actionsOf(sdk.ScopeTagOnCreate), Resource: []string{c.ec2("launch-template")},
			Condition: Conditions{}.with("StringEquals", "aws:RequestTag/"+tagTemplates, c.Cluster).with("StringEquals", "ec2:CreateAction", "CreateLaunchTemplate")},
		{Sid: "CreateTheClustersTemplates", Action: actionsOf(sdk.ScopeClusterTemplates, "Create"), Resource: []string{c.ec2("launch-template")}, Condition: templates},
		{Sid: "DeleteTheClustersTemplates", Action: actionsOf(sdk.ScopeClusterTemplates, "Delete"), Resource: []string{c.ec2("launch-template")},
			Condition: Conditions{}.with("StringEquals", "aws:ResourceTag/"+tagTemplates, c.Cluster)},
		{Sid: "TerminateTheClustersInstances", Action: actionsOf(sdk.ScopeClusterInstances), Resource: []string{c.ec2("instance")},
			Condition: Conditions{}.with("StringEquals", "aws:ResourceTag/"+tagClusterPrefix+c.Cluster, "owned").
				with("Null", "aws:ResourceTag/"+tagNodePool, "false")},
		{Sid: "PassTheNodeRoleToEC2", Action: actionsOf(sdk.ScopePassNodeRole), Resource: slices.Sorted(slices.Values(dedupe(c.NodeRoleARNs))),
			Condition: Conditions{}.with("StringEquals", "iam:PassedToService", "ec2.amazonaws.com")},
		{Sid: "ReadInstanceProfiles", Action: actionsOf(sdk.ScopeInstanceProfileRead), Resource: []string{iamARN("instance-profile")}},
		{Sid: "CreateTheClustersInstanceProfiles", Action: actionsOf(sdk.ScopeClusterInstanceProfiles, "Create", "Tag"),
			Resource:  []string{iamARN("instance-profile")},
			Condition: Conditions{}.with("StringEquals", "aws:RequestTag/"+tagClusterPrefix+c.Cluster, "owned")},
		{Sid: "FillTheClustersInstanceProfiles", Action: actionsOf(sdk.ScopeClusterInstanceProfiles, "AddRole"), Resource: []string{iamARN("instance-profile")},
			Condition: Conditions{}.with("StringEquals", "aws:ResourceTag/"+tagClusterPrefix+c.Cluster, "owned")},
		{Sid: "DescribeTheCluster", Action: actionsOf(sdk.ScopeCluster), Resource: []string{c.clusterARN()}},
		{Sid: "ReadZonalShifts", Action: actionsOf(sdk.ScopeZonalShiftRead), Resource: []string{"*"},
			Condition: Conditions{}.with("StringEquals", "aws:RequestedRegion", c.Region)},
		{Sid: "ReadTheClustersManagedResource", Action: actionsOf(sdk.ScopeClusterManagedResource), Resource: []string{"*"},
			Condition: Conditions{}.with("StringEquals", "arc-zonal-shift:ResourceIdentifier", c.clusterARN())},
	}}.allowAll()
}

func (c ControllerConfig) clusterARN() string {
	return "arn:" + c.partition() + ":eks:" + c.Region + ":" + c.AccountID + ":cluster/" + c.Cluster
}

func (d Document) allowAll() Document {
	for i := range d.Statement {
		d.Statement[i].Effect = "Allow"
	}
	return d
}
