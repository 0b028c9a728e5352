package aws_test

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowaws "github.com/stowage-dev/stowage/controller/aws"
	"github.com/stowage-dev/stowage/controller/aws/cache"
	"github.com/stowage-dev/stowage/controller/aws/instance"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

// TestVcpuQuota: with the account's standard on-demand vCPU quota used up, a
// launch falls over to another quota class or capacity type in the same
// Create, marks every offering of the class short (not just the one tried),
// and reports the quota when nothing else is allowed.
func TestVcpuQuota(t *testing.T) {
	stdOD := awsemu.QuotaBucket{Class: awsemu.QuotaStandard, CapacityType: awsemu.CapacityOnDemand}
	stdSpot := awsemu.QuotaBucket{Class: awsemu.QuotaStandard, CapacityType: awsemu.CapacitySpot}
	cases := []struct {
		name       string
		limits     map[awsemu.QuotaBucket]int
		types, cts []string
		wantType   string // "" for insufficient capacity
		wantCT     string
		wantFleets int
		wantReason string // on the short offerings
	}{
		{name: "another quota class on demand", limits: map[awsemu.QuotaBucket]int{stdOD: 2},
			types: []string{"c6i.large", "g5.xlarge"}, cts: []string{"on-demand"}, wantType: "g5.xlarge", wantCT: "on-demand",
			wantFleets: 1, wantReason: "VcpuLimitExceeded"},
		{name: "spot quota falls back to on-demand", limits: map[awsemu.QuotaBucket]int{stdSpot: 0},
			types: []string{"c6i.large", "r6i.large"}, cts: []string{"spot", "on-demand"}, wantType: "c6i.large", wantCT: "on-demand",
			wantFleets: 2, wantReason: "MaxSpotInstanceCountExceeded"},
		{name: "nothing else allowed is reported", limits: map[awsemu.QuotaBucket]int{stdOD: 2},
			types: []string{"c6i.large", "r6i.large"}, cts: []string{"on-demand"}, wantFleets: 1, wantReason: "VcpuLimitExceeded"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, awsemu.SmallCatalogue(), 3, func(c *awsemu.Config, _ *stowaws.Options) { c.VCPULimits = tc.limits })
			if _, err := e.cp.Create(ctx(t), nodeClaim("first", []string{"m6i.large"}, []string{"on-demand"})); err != nil && tc.limits[stdOD] > 0 {
				t.Fatalf("first on-demand launch within the quota: %v", err)
			}
			e.emu.ResetCalls()
			got, err := e.cp.Create(ctx(t), nodeClaim("second", tc.types, tc.cts))
			checkQuotaLaunch(t, got, err, tc.wantType, tc.wantCT, tc.wantReason)
			if tc.wantType == "" { // a retry answers from memory
				if _, err = e.cp.Create(ctx(t), nodeClaim("second", tc.types, tc.cts)); !cloudprovider.IsInsufficientCapacityError(err) {
					t.Fatalf("retried Create error = %v, want insufficient capacity", err)
				}
			}
			if n := e.emu.Calls("CreateFleet"); n != tc.wantFleets {
				t.Errorf("CreateFleet calls = %d, want %d", n, tc.wantFleets)
			}
			// m6i.xlarge was never tried, but shares the quota.
			ct := "on-demand"
			if tc.wantReason == "MaxSpotInstanceCountExceeded" {
				ct = "spot"
			}
			if !e.cp.Unavailable().IsUnavailable(cache.Offering{InstanceType: "m6i.xlarge", Zone: "us-east-1c", CapacityType: ct}) {
				t.Errorf("m6i.xlarge %s not marked short, want the whole quota class marked", ct)
			}
		})
	}
}

func checkQuotaLaunch(t *testing.T, got *v1alpha1.NodeClaim, err error, wantType, wantCT, wantReason string) {
	t.Helper()
	var ice *cloudprovider.InsufficientCapacityError
	if wantType == "" {
		if !errors.As(err, &ice) || len(ice.Offerings) == 0 || ice.Offerings[0].Reason != wantReason {
			t.Fatalf("Create error = %v, want insufficient capacity for %s", err, wantReason)
		}
		return
	}
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if got.Labels[corev1.LabelInstanceTypeStable] != wantType || got.Labels[v1alpha1.LabelCapacityType] != wantCT {
		t.Fatalf("launched %s/%s, want %s/%s", got.Labels[corev1.LabelInstanceTypeStable], got.Labels[v1alpha1.LabelCapacityType], wantType, wantCT)
	}
}

// TestSpotInterruptionMarksOffering follows a spot interruption warning from
// the emulator's EventBridge rule through SQS to the cloud provider, as the
// interruption controller will: the interrupted offering is avoided for the
// shortage memory's backoff and offered again after it.
func TestSpotInterruptionMarksOffering(t *testing.T) {
	e := newEnv(t, awsemu.SmallCatalogue(), 3)
	e.emu.CreateQueue("interruptions")
	e.emu.RouteEventsToQueue("interruptions")
	spot := []string{"spot"}
	claim, err := e.cp.Create(ctx(t), nodeClaim("interrupted", []string{"m6i.large"}, spot))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	id, _ := instance.ParseProviderID(claim.Status.ProviderID)
	if err := e.emu.Interrupt(id); err != nil {
		t.Fatalf("interrupting: %v", err)
	}
	interrupted := receiveInterruption(t, e)
	if interrupted != id {
		t.Fatalf("interruption names %q, want %s", interrupted, id)
	}
	seen, err := e.cp.Get(ctx(t), claim.Status.ProviderID)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	zone := seen.Labels[corev1.LabelTopologyZone]
	if d := e.cp.MarkOfferingUnavailable(seen.Labels[corev1.LabelInstanceTypeStable], zone, seen.Labels[v1alpha1.LabelCapacityType], "SpotInterruption"); d != cache.DefaultBackoff.Initial {
		t.Fatalf("avoided for %v, want %v", d, cache.DefaultBackoff.Initial)
	}
	if avail := spotAvailable(t, e, "m6i.large"); slices.Contains(avail, zone) || len(avail) != 2 {
		t.Fatalf("spot m6i.large available in %v, want every zone but %s", avail, zone)
	}
	next, err := e.cp.Create(ctx(t), nodeClaim("replacement", []string{"m6i.large"}, spot))
	if err != nil || next.Labels[corev1.LabelTopologyZone] == zone {
		t.Fatalf("replacement launched in %s (%v), want another zone than %s", next.Labels[corev1.LabelTopologyZone], err, zone)
	}
	e.clk.Step(cache.DefaultBackoff.Initial)
	if avail := spotAvailable(t, e, "m6i.large"); !slices.Contains(avail, zone) {
		t.Fatalf("spot m6i.large available in %v after the backoff, want %s back", avail, zone)
	}
	// Back, but it went short within the hour: the offering says so, for
	// the return to preferred capacity to weigh.
	if got := recentShortages(t, e, "m6i.large", zone); got != 1 {
		t.Errorf("spot m6i.large in %s went short %d times in the hour, want 1", zone, got)
	}
	e.clk.Step(cache.ShortageWindow)
	if got := recentShortages(t, e, "m6i.large", zone); got != 0 {
		t.Errorf("an hour later, %d recent shortages, want 0", got)
	}
}

func recentShortages(t *testing.T, e *env, instanceType, zone string) int {
	t.Helper()
	types, err := e.cp.InstanceTypes(ctx(t), nodePool("default"))
	if err != nil {
		t.Fatalf("listing instance types: %v", err)
	}
	for _, it := range types {
		for _, o := range it.Offerings {
			if it.Name == instanceType && o.CapacityType == "spot" && o.Zone == zone {
				return o.RecentShortages
			}
		}
	}
	t.Fatalf("no spot %s offering in %s", instanceType, zone)
	return 0
}

// receiveInterruption reads, through the real SQS client, the interruption
// warning the emulator delivered to its queue.
func receiveInterruption(t *testing.T, e *env) string {
	t.Helper()
	c := sqs.NewFromConfig(sdkConfig(e.srv.URL, 3))
	q, err := c.GetQueueUrl(ctx(t), &sqs.GetQueueUrlInput{QueueName: awssdk.String("interruptions")})
	if err != nil {
		t.Fatalf("opening the queue: %v", err)
	}
	out, err := c.ReceiveMessage(ctx(t), &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, MaxNumberOfMessages: 10})
	if err != nil {
		t.Fatalf("receiving: %v", err)
	}
	for _, m := range out.Messages {
		var ev struct {
			DetailType string            `json:"detail-type"`
			Detail     map[string]string `json:"detail"`
		}
		if json.Unmarshal([]byte(awssdk.ToString(m.Body)), &ev) == nil && ev.DetailType == "EC2 Spot Instance Interruption Warning" {
			return ev.Detail["instance-id"]
		}
	}
	t.Fatalf("no spot interruption warning among %d messages", len(out.Messages))
	return ""
}

func spotAvailable(t *testing.T, e *env, instanceType string) []string {
	t.Helper()
	types, err := e.cp.InstanceTypes(ctx(t), nodePool("default"))
	if err != nil {
		t.Fatalf("listing instance types: %v", err)
	}
	var zones []string
	for _, it := range types {
		for _, o := range it.Offerings {
			if it.Name == instanceType && o.CapacityType == "spot" && o.Available {
				zones = append(zones, o.Zone)
			}
		}
	}
	return zones
}
