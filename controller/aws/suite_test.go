package aws_test

import (
	"context"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowaws "github.com/stowage-dev/stowage/controller/aws"
	"github.com/stowage-dev/stowage/controller/aws/amifamily"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/nodeboot"
	"github.com/stowage-dev/stowage/internal/userdatacheck"
)

const (
	cluster    = "test"
	k8sVersion = "1.37"
	nodeRole   = "StowageNodeRole"
	clusterARN = "arn:aws:eks:us-east-1:123456789012:cluster/" + cluster
)

// env is an emulator on loopback and a cloud provider whose real SDK clients
// talk to it as the controller's role, under the policy generated for it;
// clients are the administrator's, for tests that call AWS themselves.
type env struct {
	emu     *awsemu.Emulator
	srv     *httptest.Server
	clients stowaws.Clients
	// asRole are clients acting as the controller's role (asController).
	asRole  stowaws.Clients
	cp      *stowaws.CloudProvider
	clk     *clocktesting.FakeClock
	nc      *v1alpha1.NodeClass
	subnets []string
	sg      string
	images  map[string]string
	opts    stowaws.Options
	// hear, a func(awsemu.Authorization) once stored, hears every decision
	// the emulator makes for the cloud provider's role (asController).
	hear atomic.Value
	// denialsExpected stops asController failing the test on a denial.
	denialsExpected atomic.Bool
}

// envOption adjusts the emulator's configuration or the cloud provider's
// options before they are built.
type envOption func(*awsemu.Config, *stowaws.Options)

func newEnv(t testing.TB, types []awsemu.InstanceTypeSpec, zones int, options ...envOption) *env {
	t.Helper()
	cfg := awsemu.DefaultConfig()
	cfg.InstanceTypes, cfg.Zones = types, awsemu.ZonesFor("us-east-1", zones)
	cfg.PendingDelay, cfg.ShuttingDownDelay = 0, 0
	e := &env{clk: clocktesting.NewFakeClock(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))}
	e.opts = stowaws.Options{
		Cluster:           amifamily.Cluster{Name: cluster, Endpoint: "https://api.test", CABundle: "Q0E=", CIDR: "10.100.0.0/16"},
		Region:            "us-east-1",
		KubernetesVersion: k8sVersion,
		Clock:             e.clk,
	}
	for _, o := range options {
		o(&cfg, &e.opts)
	}
	e.emu = awsemu.New(cfg)
	e.srv = e.emu.Start()
	t.Cleanup(e.srv.Close)
	e.subnets, e.sg = e.emu.SeedDefaultNetwork(cluster)
	e.images = e.emu.SeedEKSImages(k8sVersion)
	e.emu.AddRole(nodeRole)
	e.clients = stowaws.ClientsFromConfig(sdkConfig(e.srv.URL, 3))
	e.nc = nodeClass("default", "al2023@latest")
	e.asRole = asController(t, e, types)
	e.cp = e.newProvider(e.asRole)
	t.Cleanup(func() { checkUserData(t, e.emu) })
	return e
}

// checkUserData reads the user data of every launch template the test left
// as a node of its image would, each NodeConfig checked against nodeadm's
// schema and each Bottlerocket document by a TOML parser.
func checkUserData(t testing.TB, emu *awsemu.Emulator) {
	t.Helper()
	for _, lt := range emu.LaunchTemplates() {
		img, ok := emu.ImageByID(lt.ImageID)
		if !ok || lt.UserData == "" {
			continue
		}
		if _, err := userdatacheck.Check(nodeboot.FamilyOfImage(img.Name), lt.UserData); err != nil {
			t.Errorf("launch template %s: a node of %s would refuse its user data: %v", lt.Name, img.Name, err)
		}
	}
}

func (e *env) newProvider(c stowaws.Clients) *stowaws.CloudProvider {
	return stowaws.New(c, stowaws.StaticNodeClasses{e.nc.Name: e.nc}, e.opts)
}

// sdkConfig points every client at the emulator with static credentials and a
// short retry backoff.
func sdkConfig(url string, attempts int) awssdk.Config {
	return awssdk.Config{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDEMULATOR", "secret", ""),
		BaseEndpoint: awssdk.String(url),
		Retryer: func() awssdk.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts, o.MaxBackoff = attempts, 5*time.Millisecond
			})
		},
	}
}

func nodeClass(name, alias string) *v1alpha1.NodeClass {
	tags := map[string]string{"stowage.dev/discovery": cluster}
	return &v1alpha1.NodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.NodeClassSpec{
			AMISelectorTerms:           []v1alpha1.AMISelectorTerm{{Alias: alias}},
			SubnetSelectorTerms:        []v1alpha1.SelectorTerm{{Tags: tags}},
			SecurityGroupSelectorTerms: []v1alpha1.SecurityGroupSelectorTerm{{Tags: tags}},
			Role:                       nodeRole,
		},
	}
}

func nodePool(nc string) *v1alpha1.NodePool {
	return &v1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: v1alpha1.NodePoolSpec{Template: v1alpha1.NodeClaimTemplate{Spec: v1alpha1.NodeClaimTemplateSpec{
			NodeClassRef: &v1alpha1.NodeClassReference{Group: v1alpha1.Group, Kind: "NodeClass", Name: nc}}}}}
}

func nodeClaim(name string, types, capacityTypes []string) *v1alpha1.NodeClaim {
	return &v1alpha1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1alpha1.LabelNodePool: "default"}},
		Spec: v1alpha1.NodeClaimSpec{
			NodeClassRef: &v1alpha1.NodeClassReference{Group: v1alpha1.Group, Kind: "NodeClass", Name: "default"},
			Requirements: []v1alpha1.NodeSelectorRequirementWithMinValues{
				{Key: corev1.LabelInstanceTypeStable, Operator: v1alpha1.OperatorIn, Values: types},
				{Key: v1alpha1.LabelCapacityType, Operator: v1alpha1.OperatorIn, Values: capacityTypes},
			},
			Resources: v1alpha1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}},
		},
	}
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}
