package awsemu_test

import (
	"context"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/arczonalshift"
	arctypes "github.com/aws/aws-sdk-go-v2/service/arczonalshift/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

const (
	clusterARN = "arn:aws:eks:us-east-1:123456789012:cluster/prod"
	otherARN   = "arn:aws:eks:us-east-1:123456789012:cluster/other"
)

// startShift starts a zonal shift through the SDK, failing the test on error.
func startShift(t *testing.T, c *arczonalshift.Client, resource, awayFrom, expiresIn string) *arczonalshift.StartZonalShiftOutput {
	t.Helper()
	out, err := c.StartZonalShift(context.Background(), &arczonalshift.StartZonalShiftInput{ResourceIdentifier: awssdk.String(resource),
		AwayFrom: awssdk.String(awayFrom), ExpiresIn: awssdk.String(expiresIn), Comment: awssdk.String(awayFrom + " impaired")})
	if err != nil {
		t.Fatalf("starting a zonal shift of %s away from %s: %v", resource, awayFrom, err)
	}
	return out
}

// A zonal shift of the cluster, started through the real SDK, is listed
// ACTIVE until it expires, then EXPIRED; another cluster's is not listed for
// the cluster; an autoshift is ACTIVE until it ends, then COMPLETED.
func TestZonalShiftsAndAutoshiftsThroughTheSDK(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
	cfg := awsemu.DefaultConfig()
	cfg.Clock = clk
	e := awsemu.New(cfg)
	e.AddEKSCluster(awsemu.EKSCluster{Name: "prod", ZonalShift: true})
	e.AddEKSCluster(awsemu.EKSCluster{Name: "other", ZonalShift: true})
	c := arczonalshift.NewFromConfig(client(t, e))
	ctx := context.Background()
	shift := startShift(t, c, clusterARN, "use1-az1", "1h")
	startShift(t, c, otherARN, "use1-az2", "1h")
	e.StartAutoshift("use1-az3")
	shifts := func(status arctypes.ZonalShiftStatus) []arctypes.ZonalShiftSummary {
		t.Helper()
		out, err := c.ListZonalShifts(ctx, &arczonalshift.ListZonalShiftsInput{ResourceIdentifier: awssdk.String(clusterARN), Status: status})
		if err != nil {
			t.Fatal(err)
		}
		return out.Items
	}
	active := shifts("")
	if len(active) != 1 || awssdk.ToString(active[0].AwayFrom) != "use1-az1" || active[0].Status != arctypes.ZonalShiftStatusActive ||
		awssdk.ToString(active[0].ZonalShiftId) != awssdk.ToString(shift.ZonalShiftId) || !awssdk.ToTime(active[0].ExpiryTime).Equal(clk.Now().Add(time.Hour)) {
		t.Fatalf("active shifts %+v, want the cluster's one away from use1-az1", active)
	}
	auto, err := c.ListAutoshifts(ctx, &arczonalshift.ListAutoshiftsInput{})
	if err != nil || len(auto.Items) != 1 || awssdk.ToString(auto.Items[0].AwayFrom) != "use1-az3" || auto.Items[0].EndTime != nil {
		t.Fatalf("autoshifts %+v (%v), want the active one away from use1-az3", auto, err)
	}
	clk.Step(time.Hour)
	e.EndAutoshift("use1-az3")
	if active := shifts(""); len(active) != 0 {
		t.Errorf("active shifts an hour later %+v, want none", active)
	}
	if expired := shifts(arctypes.ZonalShiftStatusExpired); len(expired) != 1 {
		t.Errorf("expired shifts %+v, want the cluster's", expired)
	}
	done, err := c.ListAutoshifts(ctx, &arczonalshift.ListAutoshiftsInput{Status: arctypes.AutoshiftExecutionStatusCompleted})
	if err != nil || len(done.Items) != 1 || !awssdk.ToTime(done.Items[0].EndTime).Equal(clk.Now()) {
		t.Errorf("completed autoshifts %+v (%v), want the one that just ended", done, err)
	}
	if _, err := c.ListZonalShifts(ctx, &arczonalshift.ListZonalShiftsInput{MaxResults: awssdk.Int32(0)}); code(err) != "ValidationException" {
		t.Errorf("maxResults 0: error %v, want ValidationException", err)
	}
}

// The calls are authorized as AWS authorizes them: a principal whose policy
// allows ListZonalShifts alone may not list autoshifts.
func TestZonalShiftCallsAreAuthorized(t *testing.T) {
	e := awsemu.New(awsemu.DefaultConfig())
	doc := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"arc-zonal-shift:ListZonalShifts","Resource":"*"}]}`
	if err := e.AddUser("reader", "AKIDREADER", "reader-secret", map[string]string{"shifts": doc}); err != nil {
		t.Fatal(err)
	}
	cfg := client(t, e)
	cfg.Credentials = credentials.NewStaticCredentialsProvider("AKIDREADER", "reader-secret", "")
	c := arczonalshift.NewFromConfig(cfg)
	if _, err := c.ListZonalShifts(context.Background(), &arczonalshift.ListZonalShiftsInput{}); err != nil {
		t.Errorf("ListZonalShifts: %v, want allowed", err)
	}
	if _, err := c.ListAutoshifts(context.Background(), &arczonalshift.ListAutoshiftsInput{}); code(err) != "AccessDeniedException" {
		t.Errorf("ListAutoshifts: error %v, want AccessDeniedException", err)
	}
}
