package awsemu_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

// TestFaultsAnswerAsAWSDoes checks each request-level fault through the real
// SDK: EC2's error code and HTTP status, and that the SDK's standard
// retryer takes it for what it is (a throttle or a transient error to retry).
func TestFaultsAnswerAsAWSDoes(t *testing.T) {
	for _, tc := range []struct {
		kind     awsemu.FaultKind
		code     string
		status   int
		throttle bool
	}{
		{awsemu.FaultThrottle, "RequestLimitExceeded", http.StatusServiceUnavailable, true},
		{awsemu.FaultServerError, "InternalError", http.StatusInternalServerError, false},
		{awsemu.FaultUnavailable, "Unavailable", http.StatusServiceUnavailable, false},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			e := awsemu.New(awsemu.DefaultConfig())
			e.Inject(awsemu.Fault{Action: "DescribeInstances", Kind: tc.kind, Times: 1})
			c := ec2.NewFromConfig(client(t, e))
			_, err := c.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{})
			var re *awshttp.ResponseError
			if code(err) != tc.code || !errors.As(err, &re) || re.HTTPStatusCode() != tc.status {
				t.Fatalf("error %v, want %s with HTTP %d", err, tc.code, tc.status)
			}
			if retry.IsErrorRetryables(retry.DefaultRetryables).IsErrorRetryable(err) != awssdk.TrueTernary {
				t.Errorf("the SDK would not retry %v", err)
			}
			if got := (retry.IsErrorThrottles(retry.DefaultThrottles).IsErrorThrottle(err) == awssdk.TrueTernary); got != tc.throttle {
				t.Errorf("the SDK takes %v for a throttle: %v, want %v", err, got, tc.throttle)
			}
			if _, err := c.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{}); err != nil {
				t.Errorf("the second call, past Times: %v", err)
			}
			if n := e.FaultsInjected()[tc.kind]; n != 1 {
				t.Errorf("FaultsInjected()[%s] = %d, want 1", tc.kind, n)
			}
		})
	}
}

// fleet launches one on-demand instance of the first type it can, from two
// overrides, through the real SDK, and returns the answer.
func fleet(t *testing.T, c *ec2.Client, subnet string) *ec2.CreateFleetOutput {
	t.Helper()
	var overrides []ec2types.FleetLaunchTemplateOverridesRequest
	for _, it := range []string{"c6i.large", "m6i.large"} {
		overrides = append(overrides, ec2types.FleetLaunchTemplateOverridesRequest{InstanceType: ec2types.InstanceType(it), SubnetId: awssdk.String(subnet)})
	}
	out, err := c.CreateFleet(context.Background(), &ec2.CreateFleetInput{Type: ec2types.FleetTypeInstant,
		TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{TotalTargetCapacity: awssdk.Int32(1),
			DefaultTargetCapacityType: ec2types.DefaultTargetCapacityTypeOnDemand},
		LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
			LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateName: awssdk.String("none"), Version: awssdk.String("$Latest")},
			Overrides:                   overrides,
		}}})
	if err != nil {
		t.Fatalf("CreateFleet: %v", err)
	}
	return out
}

func errorCodes(out *ec2.CreateFleetOutput) []string {
	var codes []string
	for _, e := range out.Errors {
		codes = append(codes, string(e.LaunchTemplateAndOverrides.Overrides.InstanceType)+":"+awssdk.ToString(e.ErrorCode))
	}
	return codes
}

func TestFleetFaultsShapeTheFleetsAnswer(t *testing.T) {
	e := awsemu.New(awsemu.DefaultConfig())
	subnets, _ := e.SeedDefaultNetwork("c")
	c := ec2.NewFromConfig(client(t, e))
	createTemplate(t, c, "none", e.SeedEKSImages("1.37"), nil)

	e.Inject(awsemu.Fault{Kind: awsemu.FaultInsufficientCapacity, Times: 1})
	out := fleet(t, c, subnets[0])
	if codes := errorCodes(out); len(out.Instances) != 0 || len(codes) != 2 ||
		codes[0] != "c6i.large:InsufficientInstanceCapacity" || codes[1] != "m6i.large:InsufficientInstanceCapacity" {
		t.Errorf("insufficient-capacity: instances %v, errors %v; want none, and both overrides short", out.Instances, codes)
	}

	e.Inject(awsemu.Fault{Kind: awsemu.FaultPartial, Times: 1})
	out = fleet(t, c, subnets[0])
	if codes := errorCodes(out); len(codes) != 1 || codes[0] != "c6i.large:InsufficientInstanceCapacity" ||
		len(out.Instances) != 1 || out.Instances[0].InstanceType != "m6i.large" {
		t.Errorf("partial: instances %+v, errors %v; want the first override short and an m6i.large", out.Instances, codes)
	}

	out = fleet(t, c, subnets[0])
	if len(out.Errors) != 0 || len(out.Instances) != 1 || out.Instances[0].InstanceType != "c6i.large" {
		t.Errorf("after the faults: instances %+v, errors %v; want a c6i.large", out.Instances, errorCodes(out))
	}
	if got := e.FaultsInjected(); got[awsemu.FaultInsufficientCapacity] != 1 || got[awsemu.FaultPartial] != 1 {
		t.Errorf("FaultsInjected() = %v, want one of each fleet fault", got)
	}
}

// throttled makes n DescribeInstances calls under a plan and says which failed.
func throttled(t *testing.T, seed int64, n int) []bool {
	t.Helper()
	e := awsemu.New(awsemu.DefaultConfig())
	e.SetFaultPlan(awsemu.FaultPlan{Seed: seed, Rules: []awsemu.Fault{
		{Action: "DescribeInstances", Kind: awsemu.FaultThrottle, Probability: 0.3},
		{Action: "CreateFleet", Kind: awsemu.FaultServerError, Probability: 1},
	}})
	c := ec2.NewFromConfig(client(t, e))
	out := make([]bool, n)
	failures := 0
	for i := range out {
		_, err := c.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{})
		if out[i] = err != nil; out[i] {
			failures++
			if code(err) != "RequestLimitExceeded" {
				t.Fatalf("call %d: %v, want only throttles", i, err)
			}
		}
	}
	if got := e.FaultsInjected(); got[awsemu.FaultThrottle] != failures || len(got) != 1 {
		t.Errorf("FaultsInjected() = %v, want %d throttles alone", got, failures)
	}
	return out
}

func TestAFaultPlanDrawsFromItsSeed(t *testing.T) {
	a, b, other := throttled(t, 7, 200), throttled(t, 7, 200), throttled(t, 8, 200)
	failures, same, sameOther := 0, true, true
	for i := range a {
		if a[i] {
			failures++
		}
		same = same && a[i] == b[i]
		sameOther = sameOther && a[i] == other[i]
	}
	if !same {
		t.Error("seed 7 throttled different calls twice")
	}
	if sameOther {
		t.Error("seeds 7 and 8 throttled the same calls")
	}
	if failures < 40 || failures > 80 {
		t.Errorf("%d of 200 calls throttled at a rate of 0.3", failures)
	}
}

func TestAPlannedLatencyHoldsTheAnswerOnTheClock(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	cfg := awsemu.DefaultConfig()
	cfg.Clock = clk
	e := awsemu.New(cfg)
	e.SetFaultPlan(awsemu.FaultPlan{Seed: 1, Rules: []awsemu.Fault{{Action: "DescribeInstances", Kind: awsemu.FaultLatency, Delay: 5 * time.Second, Probability: 1}}})
	c := ec2.NewFromConfig(client(t, e))
	done := make(chan error, 1)
	go func() {
		_, err := c.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{})
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !clk.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("the request never waited on the clock")
		}
		select {
		case err := <-done:
			t.Fatalf("the answer came before the delay: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	clk.Step(5 * time.Second)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer once the clock passed the delay")
	}
}
