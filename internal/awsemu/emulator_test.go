package awsemu_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

func client(t *testing.T, e *awsemu.Emulator) awssdk.Config {
	srv := e.Start()
	t.Cleanup(srv.Close)
	return awssdk.Config{Region: "us-east-1", BaseEndpoint: awssdk.String(srv.URL), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEMULATOR", "secret", "")}
}

func code(err error) string {
	var ae smithy.APIError
	if errorsAs(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func TestDryRunAndPagination(t *testing.T) {
	cfg := awsemu.DefaultConfig()
	cfg.InstanceTypes = awsemu.SyntheticCatalogue(23)
	c := ec2.NewFromConfig(client(t, awsemu.New(cfg)))
	ctx := context.Background()
	_, err := c.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{DryRun: awssdk.Bool(true)})
	if code(err) != "DryRunOperation" {
		t.Fatalf("dry run: error %v, want DryRunOperation", err)
	}
	cases := []struct {
		max       int32
		wantPages int
		wantCode  string
	}{{5, 5, ""}, {10, 3, ""}, {100, 1, ""}, {4, 0, "InvalidParameterValue"}}
	for _, tc := range cases {
		pages, total := 0, 0
		p := ec2.NewDescribeInstanceTypesPaginator(c, &ec2.DescribeInstanceTypesInput{MaxResults: awssdk.Int32(tc.max)})
		for p.HasMorePages() {
			out, err := p.NextPage(ctx)
			if err != nil {
				if code(err) != tc.wantCode {
					t.Fatalf("max %d: error %v, want %s", tc.max, err, tc.wantCode)
				}
				break
			}
			pages, total = pages+1, total+len(out.InstanceTypes)
		}
		if tc.wantCode == "" && (pages != tc.wantPages || total != 23) {
			t.Errorf("max %d: %d pages, %d types; want %d pages of 23 types", tc.max, pages, total, tc.wantPages)
		}
	}
}

func TestCreateFleetInProcess(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	cfg := awsemu.DefaultConfig()
	cfg.Clock = clk
	e := awsemu.New(cfg)
	subnets, _ := e.SeedDefaultNetwork("c")
	images := e.SeedEKSImages("1.37")
	lt := templateFor(t, e, images)
	short := awsemu.PoolKey{InstanceType: "c6i.large", Zone: "us-east-1a", CapacityType: "spot"}
	e.SetShortage(true, short)
	e.Inject(awsemu.Fault{Kind: awsemu.FaultPartial, Limit: 2, Times: 1})
	req := awsemu.FleetRequest{ClientToken: "t1", CapacityType: "spot", TotalTargetCapacity: 3, SpotStrategy: "lowest-price",
		Overrides: []awsemu.FleetOverride{{LaunchTemplateID: lt, InstanceType: "c6i.large", SubnetID: subnets[0]},
			{LaunchTemplateID: lt, InstanceType: "m6i.large", SubnetID: subnets[0]}}}
	res, err := e.CreateFleet(req)
	if err != nil {
		t.Fatalf("CreateFleet: %v", err)
	}
	if len(res.Errors) != 1 || res.Errors[0].Code != awsemu.CodeInsufficientCapacity || len(res.Instances) != 1 || len(res.Instances[0].InstanceIDs) != 2 {
		t.Fatalf("result %+v: want one capacity error and two m6i.large (partial fulfilment of 3)", res)
	}
	id := res.Instances[0].InstanceIDs[0]
	if in, _ := e.Instance(id); in.State != awsemu.StatePending {
		t.Fatalf("state %s, want pending", in.State)
	}
	clk.Step(cfg.PendingDelay)
	if in, _ := e.Instance(id); in.State != awsemu.StateRunning {
		t.Fatalf("state %s after the pending delay, want running", in.State)
	}
	again, err := e.CreateFleet(req)
	if err != nil || again.FleetID != res.FleetID || len(e.Instances()) != 2 {
		t.Fatalf("replay: %+v, %v, %d instances; want the first result and no new instance", again, err, len(e.Instances()))
	}
	testInterruption(t, e, clk, id)
}

func templateFor(t *testing.T, e *awsemu.Emulator, images map[string]string) string {
	t.Helper()
	var image string
	for _, id := range images {
		image = id
		break
	}
	c := ec2.NewFromConfig(client(t, e))
	out, err := c.CreateLaunchTemplate(context.Background(), &ec2.CreateLaunchTemplateInput{LaunchTemplateName: awssdk.String("lt"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: awssdk.String(image)}})
	if err != nil {
		t.Fatalf("creating launch template: %v", err)
	}
	if _, err := c.CreateLaunchTemplate(context.Background(), &ec2.CreateLaunchTemplateInput{LaunchTemplateName: awssdk.String("lt"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: awssdk.String(image)}}); code(err) != "InvalidLaunchTemplateName.AlreadyExistsException" {
		t.Fatalf("duplicate template: error %v", err)
	}
	return awssdk.ToString(out.LaunchTemplate.LaunchTemplateId)
}

// testInterruption raises a spot interruption: the EventBridge event reaches the
// routed queue, and the instance terminates after the notice.
func testInterruption(t *testing.T, e *awsemu.Emulator, clk *clocktesting.FakeClock, id string) {
	t.Helper()
	e.CreateQueue("interruptions")
	e.RouteEventsToQueue("interruptions")
	if err := e.Interrupt(id); err != nil {
		t.Fatalf("interrupting: %v", err)
	}
	msgs := e.QueueMessages("interruptions")
	var ev awsemu.Event
	if len(msgs) != 1 || json.Unmarshal([]byte(msgs[0]), &ev) != nil || ev.DetailType != "EC2 Spot Instance Interruption Warning" {
		t.Fatalf("queue holds %v, want one spot interruption warning", msgs)
	}
	clk.Step(2*time.Minute + 5*time.Second)
	if in, _ := e.Instance(id); in.State != awsemu.StateTerminated {
		t.Fatalf("state %s after the notice, want terminated", in.State)
	}
}

func TestSQSReceiptHandles(t *testing.T) {
	c := sqs.NewFromConfig(client(t, awsemu.New(awsemu.DefaultConfig())))
	ctx := context.Background()
	q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: awssdk.String("q")})
	if err != nil {
		t.Fatalf("create queue: %v", err)
	}
	_, err = c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: q.QueueUrl, ReceiptHandle: awssdk.String("bogus")})
	if code(err) != "ReceiptHandleIsInvalid" {
		t.Fatalf("bogus receipt: error %v, want ReceiptHandleIsInvalid", err)
	}
}
