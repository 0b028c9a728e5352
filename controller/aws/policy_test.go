package aws_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowaws "github.com/stowage-dev/stowage/controller/aws"
	"github.com/stowage-dev/stowage/controller/aws/iampolicy"
	"github.com/stowage-dev/stowage/controller/aws/sdk"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/iamcheck/reference"
	"github.com/stowage-dev/stowage/internal/testenv"
)

// controllerRole is the role the suite's cloud providers act as.
const controllerRole = "stowage-controller"

// asController creates the controller's role with the policy generated for
// the env (its cluster, region, node role and every type of its catalogue)
// and returns clients that act as a session of it. Every authorization the
// emulator denies the role fails the test: the generated policy must allow
// each call the AWS layer makes. e.hear, once set, hears every decision.
func asController(t testing.TB, e *env, types []awsemu.InstanceTypeSpec) stowaws.Clients {
	t.Helper()
	names := make([]string, 0, len(types))
	for _, it := range types {
		names = append(names, it.Name)
	}
	doc, err := iampolicy.Controller(iampolicy.ControllerConfig{Region: "us-east-1", AccountID: "123456789012", Cluster: cluster,
		NodeRoleARNs: []string{"arn:aws:iam::123456789012:role/" + nodeRole}, InstanceTypes: names})
	if err != nil {
		t.Fatal(err)
	}
	admin := iam.NewFromConfig(sdkConfig(e.srv.URL, 3))
	c := context.Background()
	if _, err := admin.CreateRole(c, &iam.CreateRoleInput{RoleName: awssdk.String(controllerRole),
		AssumeRolePolicyDocument: awssdk.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"pods.eks.amazonaws.com"},"Action":["sts:AssumeRole","sts:TagSession"]}]}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.PutRolePolicy(c, &iam.PutRolePolicyInput{RoleName: awssdk.String(controllerRole), PolicyName: awssdk.String("StowageController"),
		PolicyDocument: awssdk.String(doc.JSON())}); err != nil {
		t.Fatalf("IAM refused the generated policy: %v", err)
	}
	e.emu.OnAuthorize(func(a awsemu.Authorization) {
		if a.Role != controllerRole {
			return
		}
		if !a.Allowed && !e.denialsExpected.Load() {
			t.Errorf("the generated policy denies %s on %s with %v", a.Action, a.Resource, a.Context)
		}
		if hear, _ := e.hear.Load().(func(awsemu.Authorization)); hear != nil {
			hear(a)
		}
	})
	cfg := sdkConfig(e.srv.URL, 3)
	cfg.Credentials = &sessionCredentials{emu: e.emu}
	return stowaws.ClientsFromConfig(cfg)
}

// sessionCredentials are the controller role's session, renewed when it
// expires on the emulator's clock, as the SDK's web identity provider renews
// an IRSA session.
type sessionCredentials struct {
	emu *awsemu.Emulator
	mu  sync.Mutex
	cur awsemu.Credentials
}

func (s *sessionCredentials) Retrieve(context.Context) (awssdk.Credentials, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.emu.Clock().Now().Add(time.Minute).Before(s.cur.Expires) {
		c, err := s.emu.RoleCredentials(controllerRole, "suite")
		if err != nil {
			return awssdk.Credentials{}, err
		}
		s.cur = c
	}
	return awssdk.Credentials{AccessKeyID: s.cur.AccessKeyID, SecretAccessKey: s.cur.SecretAccessKey, SessionToken: s.cur.SessionToken}, nil
}

// TestTheGeneratedPolicyAllowsEveryCallAndNothingUnused drives every path of
// the AWS layer as the controller's role (launches of each capacity type, an
// instance profile made for the node role, reads, the cluster's service
// CIDR, termination, the launch template GC): every authorization is allowed (asController fails the test
// otherwise), and every action the policy grants is one the emulator
// authorized for these calls; an action nothing needs is a grant too many.
//
// First, without any call, the policy is held to AWS's Service Authorization
// Reference (iam-data as make tools installs it): each action it grants is
// granted on every resource type the reference lists for it, but those
// unusedResourceTypes names.
func TestTheGeneratedPolicyAllowsEveryCallAndNothingUnused(t *testing.T) {
	checkAgainstTheReference(t)
	var mu sync.Mutex
	authorized := map[string]bool{}
	e := newEnv(t, awsemu.SmallCatalogue(), 3, withZonalShifts)
	e.nc.Spec.CapacityReservationSelectorTerms = []v1alpha1.CapacityReservationSelectorTerm{{Tags: map[string]string{"team": "ml"}}}
	// A data volume from the account's own snapshot, beside the image's root volume.
	e.nc.Spec.BlockDeviceMappings = []v1alpha1.BlockDeviceMapping{{DeviceName: awssdk.String("/dev/xvda"), RootVolume: true},
		{DeviceName: awssdk.String("/dev/xvdb"), EBS: &v1alpha1.BlockDevice{SnapshotID: awssdk.String("snap-0123456789abcdef0")}}}
	var snapshots []string
	e.hear.Store(func(a awsemu.Authorization) {
		mu.Lock()
		defer mu.Unlock()
		authorized[a.Action] = true
		if a.Action == "ec2:RunInstances" && strings.Contains(a.Resource, ":snapshot/") && !slices.Contains(snapshots, a.Resource) {
			snapshots = append(snapshots, a.Resource)
		}
	})
	addReservation(e, 1, map[string]string{"team": "ml"})
	byID := nodeClass("by-id", "")
	byID.Spec.AMISelectorTerms = []v1alpha1.AMISelectorTerm{{ID: firstImage(e)}} // DescribeImages rather than SSM
	if st := e.cp.Status(ctx(t), byID); st.Conditions[0].Status != "True" {
		t.Fatalf("a node class with an image by id: %+v", st.Conditions[0])
	}
	if err := e.cp.Refresh(ctx(t)); err != nil {
		t.Fatal(err)
	}
	e.emu.AddEKSCluster(awsemu.EKSCluster{Name: cluster, ServiceIPv4CIDR: "10.100.0.0/16", IPFamily: "ipv4"})
	if _, err := stowaws.ServiceCIDR(ctx(t), e.asRole.EKS, cluster); err != nil {
		t.Fatal(err)
	}
	if err := e.cp.RefreshZonalShifts(ctx(t)); err != nil {
		t.Fatal(err)
	}
	var launched []string
	for _, ct := range []string{"reserved", "spot", "on-demand"} {
		claim, err := e.cp.Create(ctx(t), nodeClaim("claim-"+ct, []string{"m6i.large"}, []string{ct}))
		if err != nil {
			t.Fatalf("launching %s: %v", ct, err)
		}
		launched = append(launched, claim.Status.ProviderID)
	}
	for _, id := range launched {
		claim, err := e.cp.Get(ctx(t), id)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.cp.Delete(ctx(t), claim); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 { // first seen, then idle past the TTL
		e.clk.Step(2 * time.Hour)
		if _, err := e.cp.GarbageCollectLaunchTemplates(ctx(t)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(e.emu.LaunchTemplates()); n != 0 {
		t.Errorf("%d launch templates left after the GC", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(snapshots, "arn:aws:ec2:us-east-1::snapshot/snap-0123456789abcdef0") || len(snapshots) < 2 {
		t.Errorf("launches authorized on snapshots %v, want the image's and the NodeClass's snap-0123456789abcdef0", snapshots)
	}
	for _, p := range sdk.Permissions {
		if !authorized[p.Action] {
			t.Errorf("the policy grants %s, which no call of the AWS layer needed", p.Action)
		}
	}
	for a := range authorized {
		if !slices.ContainsFunc(sdk.Permissions, func(p sdk.Permission) bool { return p.Action == a }) {
			t.Errorf("the emulator authorized %s, which sdk.Permissions does not list", a)
		}
	}
}

// unusedResourceTypes are the resource types the reference lists for an
// action that no call of Stowage's involves, each with why; a type not
// listed here must be granted. CreateTags lists every taggable type: only
// what Stowage's calls create is tagged.
var unusedResourceTypes = map[string]map[string]string{
	"ec2:RunInstances": {"elastic-gpu": "retired, and NodeClasses have no accelerator field", "elastic-inference": "retired, as elastic-gpu",
		"group": "no launch names a security group by name", "license-configuration": "NodeClasses have no licence field",
		"secondary-interface": "NodeClasses have no secondary interfaces", "secondary-subnet": "as secondary-interface",
		"key-pair": "NodeClasses have no key pair: nodes are reached through SSM", "placement-group": "NodeClasses have no placement group"},
	"ec2:CreateFleet": {"placement-group": "NodeClasses have no placement group"},
}

// stowagesResources are the resources of a type Stowage calls an action on
// when only some of the type's are: AWS's public parameters, the node role,
// the cluster it runs in.
var stowagesResources = map[string]string{
	"ssm:GetParameter":    "arn:aws:ssm:us-east-1::parameter/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/recommended/image_id",
	"iam:PassRole":        "arn:aws:iam::123456789012:role/" + nodeRole,
	"eks:DescribeCluster": "arn:aws:eks:us-east-1:123456789012:cluster/" + cluster,
}

// taggedOnCreate are the resource types Stowage's calls tag as they create them.
var taggedOnCreate = []string{"fleet", "instance", "launch-template", "volume"}

// checkAgainstTheReference holds the generated policy to the reference.
func checkAgainstTheReference(t *testing.T) {
	t.Helper()
	modules, err := testenv.IAMCheckModules()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := iampolicy.Controller(iampolicy.ControllerConfig{Region: "us-east-1", AccountID: "123456789012", Cluster: cluster,
		NodeRoleARNs: []string{"arn:aws:iam::123456789012:role/" + nodeRole}, InstanceTypes: []string{"m6i.large"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range sdk.Permissions {
		types, err := reference.ResourceTypes(modules, p.Action)
		if err != nil {
			t.Fatal(err)
		}
		for _, rt := range types {
			if _, unused := unusedResourceTypes[p.Action][rt.Name]; unused ||
				(p.Action == "ec2:CreateTags" && !slices.Contains(taggedOnCreate, rt.Name)) {
				continue
			}
			arn := rt.Example("aws", "us-east-1", "123456789012", "example")
			if own, ok := stowagesResources[p.Action]; ok {
				arn = own
			}
			if !grants(doc, p.Action, arn) {
				t.Errorf("the policy (%d statements, %d characters) does not grant %s on %s (%s, required %t), which AWS's reference lists for it",
					len(doc.Statement), doc.Size(), p.Action, arn, rt.Name, rt.Required)
			}
		}
	}
}

// grants reports whether a statement of the document allows the action on
// the resource, its conditions aside.
func grants(doc iampolicy.Document, action, resource string) bool {
	for _, s := range doc.Statement {
		if s.Effect == "Allow" && slices.Contains(s.Action, action) && slices.ContainsFunc(s.Resource, func(p string) bool {
			return regexp.MustCompile("^" + strings.ReplaceAll(regexp.QuoteMeta(p), `\*`, ".*") + "$").MatchString(resource)
		}) {
			return true
		}
	}
	return false
}
