package awsemu_test

import (
	"context"
	"errors"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/arczonalshift"
	arctypes "github.com/aws/aws-sdk-go-v2/service/arczonalshift/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

// A zonal shift started, updated and cancelled through the real SDK, with
// the errors ARC documents: a bad length or zone (ValidationException with
// its reason), a resource ARC does not manage (ResourceNotFoundException), a
// second active shift of the resource or a cancel of an ended one
// (ConflictException with its reason and the shift's ID).
func TestZonalShiftLifecycleAndErrorsThroughTheSDK(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
	cfg := awsemu.DefaultConfig()
	cfg.Clock = clk
	e := awsemu.New(cfg)
	e.AddEKSCluster(awsemu.EKSCluster{Name: "prod", ZonalShift: true})
	e.AddEKSCluster(awsemu.EKSCluster{Name: "plain"})
	c := arczonalshift.NewFromConfig(client(t, e))
	ctx := context.Background()
	start := func(resource, awayFrom, expiresIn string) error {
		_, err := c.StartZonalShift(ctx, &arczonalshift.StartZonalShiftInput{ResourceIdentifier: awssdk.String(resource),
			AwayFrom: awssdk.String(awayFrom), ExpiresIn: awssdk.String(expiresIn), Comment: awssdk.String("test")})
		return err
	}
	for _, bad := range []struct{ away, expires, reason string }{
		{"use1-az1", "90s", "InvalidExpiresIn"}, {"use1-az1", "73h", "InvalidExpiresIn"}, {"use1-az9", "1h", "InvalidAz"},
	} {
		var ve *arctypes.ValidationException
		if err := start(clusterARN, bad.away, bad.expires); !errors.As(err, &ve) || string(ve.Reason) != bad.reason {
			t.Errorf("away from %s for %s: error %v, want a ValidationException for %s", bad.away, bad.expires, err, bad.reason)
		}
	}
	var nf *arctypes.ResourceNotFoundException
	if err := start("arn:aws:eks:us-east-1:123456789012:cluster/plain", "use1-az1", "1h"); !errors.As(err, &nf) {
		t.Errorf("a cluster without zonal shift: error %v, want ResourceNotFoundException", err)
	}
	shift := startShift(t, c, clusterARN, "use1-az1", "30m")
	var conflict *arctypes.ConflictException
	if err := start(clusterARN, "use1-az2", "1h"); !errors.As(err, &conflict) ||
		conflict.Reason != arctypes.ConflictExceptionReasonZonalShiftAlreadyExists || awssdk.ToString(conflict.ZonalShiftId) != awssdk.ToString(shift.ZonalShiftId) {
		t.Errorf("a second shift of the cluster: error %v, want a ConflictException naming %s", err, awssdk.ToString(shift.ZonalShiftId))
	}
	updated, err := c.UpdateZonalShift(ctx, &arczonalshift.UpdateZonalShiftInput{ZonalShiftId: shift.ZonalShiftId, ExpiresIn: awssdk.String("2h")})
	if err != nil || !awssdk.ToTime(updated.ExpiryTime).Equal(clk.Now().Add(2*time.Hour)) || updated.Status != arctypes.ZonalShiftStatusActive {
		t.Fatalf("extending the shift to 2h: %+v (%v), want it active until %s", updated, err, clk.Now().Add(2*time.Hour))
	}
	cancelled, err := c.CancelZonalShift(ctx, &arczonalshift.CancelZonalShiftInput{ZonalShiftId: shift.ZonalShiftId})
	if err != nil || cancelled.Status != arctypes.ZonalShiftStatusCanceled {
		t.Fatalf("cancelling the shift: %+v (%v), want it CANCELED", cancelled, err)
	}
	if _, err := c.CancelZonalShift(ctx, &arczonalshift.CancelZonalShiftInput{ZonalShiftId: shift.ZonalShiftId}); !errors.As(err, &conflict) ||
		conflict.Reason != arctypes.ConflictExceptionReasonZonalShiftStatusNotActive {
		t.Errorf("cancelling it again: error %v, want a ConflictException: ZonalShiftStatusNotActive", err)
	}
	if _, err := c.CancelZonalShift(ctx, &arczonalshift.CancelZonalShiftInput{ZonalShiftId: awssdk.String("no-such-shift")}); !errors.As(err, &nf) {
		t.Errorf("cancelling an unknown shift: error %v, want ResourceNotFoundException", err)
	}
}

// GetManagedResource shows the cluster's active zonal shift, with its zone
// weighed 0, and the region's autoshifts only for a cluster whose zonal
// autoshift is enabled.
func TestGetManagedResourceThroughTheSDK(t *testing.T) {
	e := awsemu.New(awsemu.DefaultConfig())
	e.AddEKSCluster(awsemu.EKSCluster{Name: "prod", ZonalShift: true})
	e.AddEKSCluster(awsemu.EKSCluster{Name: "other", ZonalShift: true, ZonalAutoshift: true})
	c := arczonalshift.NewFromConfig(client(t, e))
	startShift(t, c, clusterARN, "use1-az1", "1h")
	e.StartAutoshift("use1-az3")
	get := func(arn string) *arczonalshift.GetManagedResourceOutput {
		t.Helper()
		out, err := c.GetManagedResource(context.Background(), &arczonalshift.GetManagedResourceInput{ResourceIdentifier: awssdk.String(arn)})
		if err != nil {
			t.Fatalf("GetManagedResource %s: %v", arn, err)
		}
		return out
	}
	prod := get(clusterARN)
	if prod.ZonalAutoshiftStatus != arctypes.ZonalAutoshiftStatusDisabled || len(prod.Autoshifts) != 0 || len(prod.ZonalShifts) != 1 ||
		awssdk.ToString(prod.ZonalShifts[0].AwayFrom) != "use1-az1" || prod.AppliedWeights["use1-az1"] != 0 || prod.AppliedWeights["use1-az2"] != 1 {
		t.Errorf("prod %+v, want its shift away from use1-az1 and no autoshift (autoshift disabled)", prod)
	}
	other := get(otherARN)
	if other.ZonalAutoshiftStatus != arctypes.ZonalAutoshiftStatusEnabled || len(other.Autoshifts) != 1 ||
		awssdk.ToString(other.Autoshifts[0].AwayFrom) != "use1-az3" || other.Autoshifts[0].AppliedStatus != arctypes.AutoshiftAppliedStatusApplied {
		t.Errorf("other %+v, want the autoshift away from use1-az3 applied", other)
	}
	var nf *arctypes.ResourceNotFoundException
	if _, err := c.GetManagedResource(context.Background(), &arczonalshift.GetManagedResourceInput{
		ResourceIdentifier: awssdk.String("arn:aws:eks:us-east-1:123456789012:cluster/none")}); !errors.As(err, &nf) {
		t.Errorf("an unknown cluster: error %v, want ResourceNotFoundException", err)
	}
}

// A principal allowed to start shifts and read managed resources only where
// arc-zonal-shift:ResourceIdentifier is its cluster, as ARC's IAM guide
// scopes EKS clusters, may do so for that cluster and not for another.
func TestZonalShiftCallsAreScopedByResourceIdentifier(t *testing.T) {
	e := awsemu.New(awsemu.DefaultConfig())
	e.AddEKSCluster(awsemu.EKSCluster{Name: "prod", ZonalShift: true})
	e.AddEKSCluster(awsemu.EKSCluster{Name: "other", ZonalShift: true})
	doc := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["arc-zonal-shift:StartZonalShift","arc-zonal-shift:GetManagedResource"],` +
		`"Resource":"*","Condition":{"StringEquals":{"arc-zonal-shift:ResourceIdentifier":"` + clusterARN + `"}}}]}`
	if err := e.AddUser("operator", "AKIDOPERATOR", "operator-secret", map[string]string{"shifts": doc}); err != nil {
		t.Fatal(err)
	}
	cfg := client(t, e)
	cfg.Credentials = credentials.NewStaticCredentialsProvider("AKIDOPERATOR", "operator-secret", "")
	c := arczonalshift.NewFromConfig(cfg)
	startShift(t, c, clusterARN, "use1-az1", "1h")
	if _, err := c.GetManagedResource(context.Background(), &arczonalshift.GetManagedResourceInput{ResourceIdentifier: awssdk.String(clusterARN)}); err != nil {
		t.Errorf("GetManagedResource of its cluster: %v, want allowed", err)
	}
	_, err := c.StartZonalShift(context.Background(), &arczonalshift.StartZonalShiftInput{ResourceIdentifier: awssdk.String(otherARN),
		AwayFrom: awssdk.String("use1-az1"), ExpiresIn: awssdk.String("1h"), Comment: awssdk.String("not mine")})
	if code(err) != "AccessDeniedException" {
		t.Errorf("StartZonalShift of another cluster: error %v, want AccessDeniedException", err)
	}
	if _, err := c.GetManagedResource(context.Background(), &arczonalshift.GetManagedResourceInput{ResourceIdentifier: awssdk.String(otherARN)}); code(err) != "AccessDeniedException" {
		t.Errorf("GetManagedResource of another cluster: error %v, want AccessDeniedException", err)
	}
}
