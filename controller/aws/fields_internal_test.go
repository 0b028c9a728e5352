package aws

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/apis/crds"
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/amifamily"
	"github.com/stowage-dev/stowage/controller/aws/launchtemplate"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

// How a NodeClass field reaches a node.
const (
	// launched: it changes the launch template or the user data, so a node
	// launched before the change is not what the class now launches: the
	// field is in v1alpha1.NodeClassHash, and a change drifts the nodes.
	launched = "launch template or user data"
	// resolved: a selector; drift compares what it resolves to with the
	// running instance (IsDrifted), or it only steers new launches.
	resolved = "resolved"
	// neither: it changes neither; the case says why, and it is not hashed.
	neither = "neither"
)

type fieldCase struct {
	reach string
	edit  func(*v1alpha1.NodeClass)
	why   string
}

func ebs(nc *v1alpha1.NodeClass) *v1alpha1.BlockDevice { return nc.Spec.BlockDeviceMappings[0].EBS }

func metadata(nc *v1alpha1.NodeClass) *v1alpha1.MetadataOptions { return nc.Spec.MetadataOptions }

func kubelet(nc *v1alpha1.NodeClass) *v1alpha1.KubeletConfiguration {
	if nc.Spec.Kubelet == nil {
		nc.Spec.Kubelet = &v1alpha1.KubeletConfiguration{}
	}
	return nc.Spec.Kubelet
}

// nodeClassFields classifies every field of the NodeClass schema.
var nodeClassFields = map[string]fieldCase{
	"amiSelectorTerms.alias":                                 {reach: resolved},
	"amiSelectorTerms.id":                                    {reach: resolved},
	"amiSelectorTerms.name":                                  {reach: resolved},
	"amiSelectorTerms.owner":                                 {reach: resolved},
	"amiSelectorTerms.tags":                                  {reach: resolved},
	"subnetSelectorTerms.id":                                 {reach: resolved},
	"subnetSelectorTerms.tags":                               {reach: resolved},
	"securityGroupSelectorTerms.id":                          {reach: resolved},
	"securityGroupSelectorTerms.name":                        {reach: resolved},
	"securityGroupSelectorTerms.tags":                        {reach: resolved},
	"capacityReservationSelectorTerms.id":                    {reach: resolved},
	"capacityReservationSelectorTerms.ownerID":               {reach: resolved},
	"capacityReservationSelectorTerms.tags":                  {reach: resolved},
	"capacityReservationSelectorTerms.instanceMatchCriteria": {reach: resolved},
	"amiFamily": {reach: launched, edit: func(nc *v1alpha1.NodeClass) { nc.Spec.AMIFamily = ptr.To(v1alpha1.AMIFamilyCustom) }},
	"role":      {reach: launched, edit: func(nc *v1alpha1.NodeClass) { nc.Spec.Role = "OtherRole" }},
	"instanceProfile": {reach: launched, edit: func(nc *v1alpha1.NodeClass) {
		nc.Spec.Role, nc.Spec.InstanceProfile = "", ptr.To("existing-profile")
	}},
	"associatePublicIPAddress": {reach: launched, edit: func(nc *v1alpha1.NodeClass) { nc.Spec.AssociatePublicIPAddress = ptr.To(true) }},
	"detailedMonitoring":       {reach: launched, edit: func(nc *v1alpha1.NodeClass) { nc.Spec.DetailedMonitoring = ptr.To(true) }},
	"instanceStorePolicy":      {reach: launched, edit: func(nc *v1alpha1.NodeClass) { nc.Spec.InstanceStorePolicy = ptr.To(v1alpha1.InstanceStorePolicyRAID0) }},
	"tags":                     {reach: launched, edit: func(nc *v1alpha1.NodeClass) { nc.Spec.Tags = map[string]string{"team": "web"} }},
	"userData":                 {reach: launched, edit: func(nc *v1alpha1.NodeClass) { nc.Spec.UserData = ptr.To("#!/bin/bash\necho hi") }},
	"blockDeviceMappings.deviceName": {reach: launched, edit: func(nc *v1alpha1.NodeClass) {
		nc.Spec.BlockDeviceMappings[0].DeviceName = ptr.To("/dev/xvdb")
	}},
	"blockDeviceMappings.rootVolume": {reach: neither, edit: func(nc *v1alpha1.NodeClass) { nc.Spec.BlockDeviceMappings[0].RootVolume = true },
		why: "it says which volume holds ephemeral storage, for the prediction of allocatable; the launch template and the node are the same"},
	"blockDeviceMappings.ebs.volumeSize": {reach: launched, edit: func(nc *v1alpha1.NodeClass) { ebs(nc).VolumeSize = ptr.To(resource.MustParse("40Gi")) }},
	"blockDeviceMappings.ebs.volumeType": {reach: launched, edit: func(nc *v1alpha1.NodeClass) { ebs(nc).VolumeType = ptr.To("io2") }},
	"blockDeviceMappings.ebs.iops":       {reach: launched, edit: func(nc *v1alpha1.NodeClass) { ebs(nc).IOPS = ptr.To[int64](4000) }},
	"blockDeviceMappings.ebs.throughput": {reach: launched, edit: func(nc *v1alpha1.NodeClass) { ebs(nc).Throughput = ptr.To[int64](250) }},
	"blockDeviceMappings.ebs.encrypted":  {reach: launched, edit: func(nc *v1alpha1.NodeClass) { ebs(nc).Encrypted = ptr.To(true) }},
	"blockDeviceMappings.ebs.kmsKeyID":   {reach: launched, edit: func(nc *v1alpha1.NodeClass) { ebs(nc).KMSKeyID = ptr.To("alias/nodes") }},
	"blockDeviceMappings.ebs.snapshotID": {reach: launched, edit: func(nc *v1alpha1.NodeClass) { ebs(nc).SnapshotID = ptr.To("snap-1") }},
	"blockDeviceMappings.ebs.deleteOnTermination": {reach: launched, edit: func(nc *v1alpha1.NodeClass) {
		ebs(nc).DeleteOnTermination = ptr.To(false)
	}},
	"metadataOptions.httpEndpoint":            {reach: launched, edit: func(nc *v1alpha1.NodeClass) { metadata(nc).HTTPEndpoint = ptr.To("disabled") }},
	"metadataOptions.httpProtocolIPv6":        {reach: launched, edit: func(nc *v1alpha1.NodeClass) { metadata(nc).HTTPProtocolIPv6 = ptr.To("enabled") }},
	"metadataOptions.httpPutResponseHopLimit": {reach: launched, edit: func(nc *v1alpha1.NodeClass) { metadata(nc).HTTPPutResponseHopLimit = ptr.To[int64](2) }},
	"metadataOptions.httpTokens":              {reach: launched, edit: func(nc *v1alpha1.NodeClass) { metadata(nc).HTTPTokens = ptr.To("optional") }},
	"kubelet.maxPods":                         {reach: launched, edit: func(nc *v1alpha1.NodeClass) { kubelet(nc).MaxPods = ptr.To[int32](20) }},
	"kubelet.podsPerCore":                     {reach: launched, edit: func(nc *v1alpha1.NodeClass) { kubelet(nc).PodsPerCore = ptr.To[int32](4) }},
	"kubelet.clusterDNS":                      {reach: launched, edit: func(nc *v1alpha1.NodeClass) { kubelet(nc).ClusterDNS = []string{"169.254.20.10"} }},
	"kubelet.kubeReserved":                    {reach: launched, edit: func(nc *v1alpha1.NodeClass) { kubelet(nc).KubeReserved = map[string]string{"cpu": "1"} }},
	"kubelet.systemReserved":                  {reach: launched, edit: func(nc *v1alpha1.NodeClass) { kubelet(nc).SystemReserved = map[string]string{"cpu": "1"} }},
	"kubelet.evictionHard": {reach: launched, edit: func(nc *v1alpha1.NodeClass) {
		kubelet(nc).EvictionHard = map[string]string{"memory.available": "1Gi"}
	}},
	"kubelet.evictionSoft": {reach: launched, edit: func(nc *v1alpha1.NodeClass) {
		kubelet(nc).EvictionSoft = map[string]string{"memory.available": "1Gi"}
	}},
	"kubelet.evictionSoftGracePeriod": {reach: launched, edit: func(nc *v1alpha1.NodeClass) {
		kubelet(nc).EvictionSoftGracePeriod = map[string]metav1.Duration{"memory.available": {Duration: time.Minute}}
	}},
	"kubelet.evictionMaxPodGracePeriod":   {reach: launched, edit: func(nc *v1alpha1.NodeClass) { kubelet(nc).EvictionMaxPodGracePeriod = ptr.To[int32](30) }},
	"kubelet.imageGCHighThresholdPercent": {reach: launched, edit: func(nc *v1alpha1.NodeClass) { kubelet(nc).ImageGCHighThresholdPercent = ptr.To[int32](90) }},
	"kubelet.imageGCLowThresholdPercent":  {reach: launched, edit: func(nc *v1alpha1.NodeClass) { kubelet(nc).ImageGCLowThresholdPercent = ptr.To[int32](50) }},
	"kubelet.cpuCFSQuota":                 {reach: launched, edit: func(nc *v1alpha1.NodeClass) { kubelet(nc).CPUCFSQuota = ptr.To(false) }},
}

// schemaLeaves lists the leaf fields of a schema as dotted paths (list items
// and maps of strings are walked into and count as leaves, respectively).
func schemaLeaves(s apiextensionsv1.JSONSchemaProps, prefix string) []string {
	if s.Type == "array" && s.Items != nil && s.Items.Schema != nil {
		s = *s.Items.Schema
	}
	if len(s.Properties) == 0 {
		return []string{prefix}
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		out = append(out, schemaLeaves(s.Properties[name], path)...)
	}
	return out
}

func fieldsClass() *v1alpha1.NodeClass {
	tags := map[string]string{"stowage.dev/discovery": "fields"}
	return &v1alpha1.NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "fields"}, Spec: v1alpha1.NodeClassSpec{
		AMISelectorTerms:           []v1alpha1.AMISelectorTerm{{Alias: "al2023@latest"}},
		SubnetSelectorTerms:        []v1alpha1.SelectorTerm{{Tags: tags}},
		SecurityGroupSelectorTerms: []v1alpha1.SecurityGroupSelectorTerm{{Tags: tags}},
		Role:                       "NodeRole",
		BlockDeviceMappings: []v1alpha1.BlockDeviceMapping{{DeviceName: ptr.To("/dev/xvda"),
			EBS: &v1alpha1.BlockDevice{VolumeSize: ptr.To(resource.MustParse("20Gi")), VolumeType: ptr.To("gp3")}}},
		MetadataOptions: &v1alpha1.MetadataOptions{HTTPEndpoint: ptr.To("enabled"), HTTPProtocolIPv6: ptr.To("disabled"),
			HTTPPutResponseHopLimit: ptr.To[int64](1), HTTPTokens: ptr.To("required")},
	}}
}

// fieldsCloud is the AWS cloud provider on an emulator that resolves
// fieldsClass and its edits.
func fieldsCloud(t *testing.T) *CloudProvider {
	cfg := awsemu.DefaultConfig()
	cfg.InstanceTypes, cfg.Zones = awsemu.SmallCatalogue(), awsemu.ZonesFor("us-east-1", 1)
	emu := awsemu.New(cfg)
	srv := emu.Start()
	t.Cleanup(srv.Close)
	emu.SeedDefaultNetwork("fields")
	emu.SeedEKSImages("1.37")
	emu.AddRole("NodeRole")
	emu.AddRole("OtherRole")
	clients := ClientsFromConfig(awssdk.Config{Region: "us-east-1", BaseEndpoint: awssdk.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEMULATOR", "secret", "")})
	if _, err := clients.IAM.(*iam.Client).CreateInstanceProfile(context.Background(),
		&iam.CreateInstanceProfileInput{InstanceProfileName: awssdk.String("existing-profile")}); err != nil {
		t.Fatal(err)
	}
	return New(clients, StaticNodeClasses{}, Options{Region: "us-east-1", KubernetesVersion: "1.37",
		Cluster: amifamily.Cluster{Name: "fields", Endpoint: "https://api", CABundle: "Q0E=", CIDR: "10.100.0.0/16"}})
}

// launchTemplateOf resolves the class and renders its launch template from
// its first image, as a launch does: what EC2 is asked to create.
func launchTemplateOf(t *testing.T, c *CloudProvider, nc *v1alpha1.NodeClass) *ec2types.RequestLaunchTemplateData {
	t.Helper()
	r, err := c.resolve(context.Background(), nc)
	if err != nil {
		t.Fatalf("resolving: %v", err)
	}
	claim := &v1alpha1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{v1alpha1.LabelNodePool: "default"}}}
	cfg, err := c.templateConfig(claim, nc, r, r.AMIs[0].ID, "")
	if err != nil {
		t.Fatalf("rendering: %v", err)
	}
	return launchtemplate.Data(cfg)
}

// TestEveryNodeClassFieldReachesTheNodeOrSaysWhyNot walks every field of the
// NodeClass schema: a field that changes the launch template or the user
// data is in the drift hash, and one in the hash changes one of them; a
// selector is resolved (not hashed); any other field says why it changes
// neither, and is not hashed.
func TestEveryNodeClassFieldReachesTheNodeOrSaysWhyNot(t *testing.T) {
	defs, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	var leaves []string
	for _, d := range defs {
		if d.Spec.Names.Kind == "NodeClass" {
			leaves = schemaLeaves(d.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"], "")
		}
	}
	if len(leaves) < 40 || len(leaves) != len(nodeClassFields) {
		t.Errorf("the schema has %d fields, the table %d: classify every field", len(leaves), len(nodeClassFields))
	}
	c := fieldsCloud(t)
	base := fieldsClass()
	baseLT, baseHash := launchTemplateOf(t, c, base), v1alpha1.NodeClassHash(base)
	for _, path := range leaves {
		t.Run(path, func(t *testing.T) {
			fc, ok := nodeClassFields[path]
			if !ok {
				t.Fatalf("spec.%s is not classified: say whether it changes the launch template or user data, is resolved, or why neither", path)
			}
			if fc.reach == resolved {
				return // the hash leaves selectors out by construction (v1alpha1's TestNodeClassHash)
			}
			nc := fieldsClass()
			fc.edit(nc)
			ltChanged := !reflect.DeepEqual(launchTemplateOf(t, c, nc), baseLT)
			hashed := v1alpha1.NodeClassHash(nc) != baseHash
			if want := fc.reach == launched; ltChanged != want || hashed != want {
				t.Errorf("changing spec.%s: launch template or user data changed %v, drift hash changed %v; want both %v (%s)", path, ltChanged, hashed, want, fc.why)
			}
			if fc.reach == neither && fc.why == "" {
				t.Errorf("spec.%s changes neither the launch template nor the user data: say why", path)
			}
		})
	}
}
