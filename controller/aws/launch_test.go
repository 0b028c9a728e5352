package aws_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/instance"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

func TestLaunch(t *testing.T) {
	od, spot := []string{"on-demand"}, []string{"spot"}
	both := []string{"spot", "on-demand"}
	cases := []struct {
		name        string
		types, cts  []string
		short       []awsemu.PoolKey
		wantType    string
		wantCT      string
		wantFleets  int
		wantICE     bool
		wantShortOf []string
	}{
		{name: "cheapest on-demand", types: []string{"m6i.large", "c6i.large"}, cts: od,
			wantType: "c6i.large", wantCT: "on-demand", wantFleets: 1},
		{name: "falls back when the cheapest pool is short", types: []string{"m6i.large", "c6i.large"}, cts: od,
			short: allZonesOf("c6i.large", "on-demand"), wantType: "m6i.large", wantCT: "on-demand", wantFleets: 1,
			wantShortOf: []string{"c6i.large"}},
		{name: "spot preferred when allowed", types: []string{"m6i.large"}, cts: both,
			wantType: "m6i.large", wantCT: "spot", wantFleets: 1},
		{name: "spot falls back to on-demand", types: []string{"m6i.large"}, cts: both,
			short: allZonesOf("m6i.large", "spot"), wantType: "m6i.large", wantCT: "on-demand", wantFleets: 2,
			wantShortOf: []string{"m6i.large"}},
		{name: "spot only and short is insufficient capacity", types: []string{"m6i.large"}, cts: spot,
			short: allZonesOf("m6i.large", "spot"), wantICE: true, wantFleets: 1, wantShortOf: []string{"m6i.large"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, awsemu.SmallCatalogue(), 3)
			e.emu.SetShortage(true, tc.short...)
			got, err := e.cp.Create(ctx(t), nodeClaim("claim-a", tc.types, tc.cts))
			if tc.wantICE != cloudprovider.IsInsufficientCapacityError(err) || (!tc.wantICE && err != nil) {
				t.Fatalf("Create error = %v, want insufficient capacity %v", err, tc.wantICE)
			}
			if n := e.emu.Calls("CreateFleet"); n != tc.wantFleets {
				t.Errorf("CreateFleet calls = %d, want %d", n, tc.wantFleets)
			}
			checkShortMarked(t, e, tc.wantShortOf)
			if tc.wantICE {
				return
			}
			if got.Labels[corev1.LabelInstanceTypeStable] != tc.wantType || got.Labels[v1alpha1.LabelCapacityType] != tc.wantCT {
				t.Errorf("launched %s/%s, want %s/%s", got.Labels[corev1.LabelInstanceTypeStable], got.Labels[v1alpha1.LabelCapacityType], tc.wantType, tc.wantCT)
			}
			checkInstance(t, e, got)
		})
	}
}

func allZonesOf(instanceType, ct string) []awsemu.PoolKey {
	var keys []awsemu.PoolKey
	for _, z := range awsemu.ZonesFor("us-east-1", 3) {
		keys = append(keys, awsemu.PoolKey{InstanceType: instanceType, Zone: z.Name, CapacityType: ct})
	}
	return keys
}

func checkShortMarked(t *testing.T, e *env, types []string) {
	t.Helper()
	for _, it := range types {
		got, err := e.cp.InstanceTypes(ctx(t), nodePool("default"))
		if err != nil {
			t.Fatalf("listing instance types: %v", err)
		}
		for _, typ := range got {
			if typ.Name != it {
				continue
			}
			if len(typ.Offerings.Available()) == len(typ.Offerings) {
				t.Errorf("%s has every offering available, want the short ones marked", it)
			}
		}
	}
}

// checkInstance checks the launched instance's tags, metadata options and image.
func checkInstance(t *testing.T, e *env, claim *v1alpha1.NodeClaim) {
	t.Helper()
	id, err := instance.ParseProviderID(claim.Status.ProviderID)
	if err != nil {
		t.Fatalf("parsing provider id: %v", err)
	}
	in, ok := e.emu.Instance(id)
	if !ok {
		t.Fatalf("instance %s not in the emulator", id)
	}
	wantTags := map[string]string{"kubernetes.io/cluster/" + cluster: "owned", "stowage.dev/nodepool": "default",
		"stowage.dev/nodeclaim": claim.Name, "Name": claim.Name}
	for k, v := range wantTags {
		if in.Tags[k] != v {
			t.Errorf("tag %s = %q, want %q", k, in.Tags[k], v)
		}
	}
	if in.HTTPTokens != "required" || in.HopLimit != 1 {
		t.Errorf("metadata options tokens=%s hop=%d, want required/1", in.HTTPTokens, in.HopLimit)
	}
	if in.ImageID != claim.Status.ImageID || in.ImageID == "" || in.UserData == "" || in.ProfileARN == "" {
		t.Errorf("instance image %q user data %d bytes profile %q, claim image %q", in.ImageID, len(in.UserData), in.ProfileARN, claim.Status.ImageID)
	}
	// The drift digest the NodeClaim drift controller and the Terraform
	// provider compare, on the claim and (for garbage collection) the instance.
	want := v1alpha1.NodeClassHash(e.nc)
	if got := claim.Annotations[v1alpha1.AnnotationNodeClassHash]; got != want || in.Tags[v1alpha1.AnnotationNodeClassHash] != want {
		t.Errorf("nodeclass hash on the claim %q and the instance %q, want v1alpha1.NodeClassHash %q", got, in.Tags[v1alpha1.AnnotationNodeClassHash], want)
	}
	if got := claim.Annotations[v1alpha1.AnnotationHashVersion]; got != v1alpha1.HashVersion {
		t.Errorf("hash version %q, want %q", got, v1alpha1.HashVersion)
	}
}

// TestShortageMemoryAvoidsRetryChurn: once every allowed offering is known to
// be short, a retried Create answers from memory without calling CreateFleet.
func TestShortageMemoryAvoidsRetryChurn(t *testing.T) {
	e := newEnv(t, awsemu.SmallCatalogue(), 3)
	e.emu.SetShortage(true, allZonesOf("m6i.large", "on-demand")...)
	claim := nodeClaim("claim-b", []string{"m6i.large"}, []string{"on-demand"})
	for i := range 3 {
		if _, err := e.cp.Create(ctx(t), claim); !cloudprovider.IsInsufficientCapacityError(err) {
			t.Fatalf("attempt %d: error %v, want insufficient capacity", i, err)
		}
	}
	if n := e.emu.Calls("CreateFleet"); n != 1 {
		t.Fatalf("CreateFleet calls = %d, want 1", n)
	}
}

// TestSameClaimNeverLaunchesTwice retries Create for one claim and replays one
// CreateFleet request with its ClientToken: one instance either way.
func TestSameClaimNeverLaunchesTwice(t *testing.T) {
	e := newEnv(t, awsemu.SmallCatalogue(), 3)
	claim := nodeClaim("claim-c", []string{"m6i.large"}, []string{"on-demand"})
	first, err := e.cp.Create(ctx(t), claim)
	if err != nil {
		t.Fatalf("first Create: %v", err)
	}
	second, err := e.cp.Create(ctx(t), claim)
	if err != nil {
		t.Fatalf("second Create: %v", err)
	}
	if first.Status.ProviderID != second.Status.ProviderID || len(e.emu.Instances()) != 1 {
		t.Fatalf("provider ids %s and %s, %d instances; want one instance", first.Status.ProviderID, second.Status.ProviderID, len(e.emu.Instances()))
	}
	testClientTokenReplay(t, e)
}
