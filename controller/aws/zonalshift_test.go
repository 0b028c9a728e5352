package aws_test

import (
	"strings"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/arczonalshift"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowaws "github.com/stowage-dev/stowage/controller/aws"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

// A zonal shift of the cluster, read by the real ARC client as the
// controller's role under its generated policy, takes its zone (us-east-1a is
// use1-az1) out of the catalogue and of launches until it expires; an
// autoshift does the same until AWS completes it, once the cluster's zonal
// autoshift is enabled (GetManagedResource), and not before.
func TestZonalShiftKeepsLaunchesOutOfTheZoneUntilItEnds(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	e := newEnv(t, awsemu.SmallCatalogue(), 3, withZonalShifts,
		func(c *awsemu.Config, o *stowaws.Options) { c.Clock, o.Clock = clk, clk })
	e.startZonalShift(t, clusterARN, "use1-az1", "1h")
	e.startZonalShift(t, "arn:aws:eks:us-east-1:123456789012:cluster/other", "use1-az2", "1h")
	refresh := func() {
		t.Helper()
		if err := e.cp.RefreshZonalShifts(ctx(t)); err != nil {
			t.Fatal(err)
		}
	}
	refresh()
	checkZonesAvailable(t, e, map[string]bool{"us-east-1a": false, "us-east-1b": true, "us-east-1c": true}, "zonal shift away from use1-az1: zonal shift ")
	if got := testutil.ToFloat64(stowaws.ZonalShiftActive.WithLabelValues("use1-az1")); got != 1 {
		t.Errorf("stowage_aws_zonal_shift_active{zone_id=use1-az1} = %v, want 1", got)
	}
	if _, err := e.cp.Create(ctx(t), inZone(nodeClaim("pinned", []string{"m6i.large"}, []string{"on-demand"}), "us-east-1a")); !cloudprovider.IsInsufficientCapacityError(err) {
		t.Errorf("a claim pinned to the shifted zone: error %v, want insufficient capacity", err)
	}
	if n := e.emu.Calls("CreateFleet"); n != 0 {
		t.Errorf("%d fleets asked for the shifted zone, want none", n)
	}
	for _, name := range []string{"a", "b", "c"} {
		claim, err := e.cp.Create(ctx(t), nodeClaim(name, []string{"m6i.large"}, []string{"on-demand"}))
		if err != nil || claim.Labels[corev1.LabelTopologyZone] == "us-east-1a" {
			t.Fatalf("claim %s launched into %v (%v), want a zone other than the shifted us-east-1a", name, claim.Labels, err)
		}
	}

	clk.Step(time.Hour) // the shift expires: the zone is used again at once, before the next read
	checkZonesAvailable(t, e, map[string]bool{"us-east-1a": true, "us-east-1b": true, "us-east-1c": true}, "")
	refresh()
	if got := testutil.ToFloat64(stowaws.ZonalShiftActive.WithLabelValues("use1-az1")); got != 0 {
		t.Errorf("stowage_aws_zonal_shift_active{zone_id=use1-az1} after expiry = %v, want 0", got)
	}
	if claim, err := e.cp.Create(ctx(t), inZone(nodeClaim("back", []string{"m6i.large"}, []string{"on-demand"}), "us-east-1a")); err != nil ||
		claim.Labels[corev1.LabelTopologyZone] != "us-east-1a" {
		t.Fatalf("a claim pinned to us-east-1a after the shift: %v (%v)", claim, err)
	}

	e.emu.StartAutoshift("use1-az3")
	refresh() // the cluster's zonal autoshift is not enabled: AWS's autoshift does not apply to it
	checkZonesAvailable(t, e, map[string]bool{"us-east-1a": true, "us-east-1b": true, "us-east-1c": true}, "")
	e.emu.AddEKSCluster(awsemu.EKSCluster{Name: cluster, Endpoint: "https://api.test", ZonalShift: true, ZonalAutoshift: true})
	refresh()
	checkZonesAvailable(t, e, map[string]bool{"us-east-1a": true, "us-east-1b": true, "us-east-1c": false}, "zonal shift away from use1-az3: autoshift")
	e.emu.EndAutoshift("use1-az3")
	refresh()
	checkZonesAvailable(t, e, map[string]bool{"us-east-1a": true, "us-east-1b": true, "us-east-1c": true}, "")
}

// withZonalShifts names the cluster's ARN, which turns zonal shift awareness
// on (Start then runs a third loop, which the loop tests do not expect).
func withZonalShifts(_ *awsemu.Config, o *stowaws.Options) { o.ClusterARN = clusterARN }

// startZonalShift starts a zonal shift of the resource (an EKS cluster, made
// known to ARC with zonal shift enabled) through the real ARC client, as
// the administrator.
func (e *env) startZonalShift(t *testing.T, resource, awayFrom, expiresIn string) {
	t.Helper()
	name := resource[strings.LastIndex(resource, "/")+1:]
	e.emu.AddEKSCluster(awsemu.EKSCluster{Name: name, Endpoint: "https://api.test", ZonalShift: true})
	_, err := arczonalshift.NewFromConfig(sdkConfig(e.srv.URL, 1)).StartZonalShift(ctx(t), &arczonalshift.StartZonalShiftInput{
		ResourceIdentifier: awssdk.String(resource), AwayFrom: awssdk.String(awayFrom), ExpiresIn: awssdk.String(expiresIn),
		Comment: awssdk.String("practice run")})
	if err != nil {
		t.Fatalf("starting a zonal shift of %s away from %s: %v", resource, awayFrom, err)
	}
}

// checkZonesAvailable checks, per zone, whether the pool's catalogue offers
// any available offering there, and that the offerings of a zone that has
// none say why: a reason starting with why, for pending pods' reasons.
func checkZonesAvailable(t *testing.T, e *env, want map[string]bool, why string) {
	t.Helper()
	types, err := e.cp.InstanceTypes(ctx(t), nodePool("default"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, it := range types {
		for _, o := range it.Offerings {
			got[o.Zone] = got[o.Zone] || o.Available
			if !want[o.Zone] && !strings.HasPrefix(o.UnavailableReason, why) {
				t.Errorf("%s %s in %s: unavailable reason %q, want one starting %q", it.Name, o.CapacityType, o.Zone, o.UnavailableReason, why)
			}
		}
	}
	for zone, w := range want {
		if got[zone] != w {
			t.Errorf("zone %s has available offerings: %v, want %v", zone, got[zone], w)
		}
	}
}

func inZone(claim *v1alpha1.NodeClaim, zone string) *v1alpha1.NodeClaim {
	claim.Spec.Requirements = append(claim.Spec.Requirements, v1alpha1.NodeSelectorRequirementWithMinValues{
		Key: corev1.LabelTopologyZone, Operator: v1alpha1.OperatorIn, Values: []string{zone}})
	return claim
}
