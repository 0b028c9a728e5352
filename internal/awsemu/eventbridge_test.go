package awsemu_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

// TestRulesDeliverMatchingEventsToTheirQueues: events put to EventBridge
// reach the SQS queue of every enabled rule whose pattern matches them,
// and no other; a disabled or target-less rule delivers nothing.
func TestRulesDeliverMatchingEventsToTheirQueues(t *testing.T) {
	e := awsemu.New(awsemu.DefaultConfig())
	cfg := client(t, e)
	eb, q := eventbridge.NewFromConfig(cfg), sqs.NewFromConfig(cfg)
	ctx := context.Background()
	ordersURL, ordersARN := queue(t, q, "orders")
	allURL, allARN := queue(t, q, "all-shop")
	rule(t, eb, "orders", `{"source":["com.example.shop"],"detail-type":["Order Placed"]}`, ordersARN)
	rule(t, eb, "all-shop", `{"source":[{"wildcard":"com.example.*"}]}`, allARN)
	rule(t, eb, "off", `{"source":["com.example.shop"]}`, ordersARN)
	if _, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: awssdk.String("off"), State: ebtypes.RuleStateDisabled,
		EventPattern: awssdk.String(`{"source":["com.example.shop"]}`)}); err != nil {
		t.Fatal(err)
	}
	out, err := eb.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{
		{Source: awssdk.String("com.example.shop"), DetailType: awssdk.String("Order Placed"), Detail: awssdk.String(`{"order":"o-1"}`)},
		{Source: awssdk.String("com.example.shop"), DetailType: awssdk.String("Order Shipped"), Detail: awssdk.String(`{"order":"o-1"}`)},
		{Source: awssdk.String("org.other"), DetailType: awssdk.String("Order Placed"), Detail: awssdk.String(`{}`)},
		{Source: awssdk.String("com.example.shop"), DetailType: awssdk.String("Bad"), Detail: awssdk.String(`not json`)},
	}})
	if err != nil || out.FailedEntryCount != 1 || awssdk.ToString(out.Entries[3].ErrorCode) != "MalformedDetail" {
		t.Fatalf("PutEvents: %+v, %v; want only the malformed entry refused", out, err)
	}
	if got := detailTypes(t, q, ordersURL); !slices.Equal(got, []string{"Order Placed"}) {
		t.Errorf("the orders rule's queue holds %v", got)
	}
	if got := detailTypes(t, q, allURL); len(got) != 2 {
		t.Errorf("the all-shop rule's queue holds %v, want the shop's two events", got)
	}
	_, err = eb.DeleteRule(ctx, &eventbridge.DeleteRuleInput{Name: awssdk.String("orders")})
	if code(err) != "ValidationException" {
		t.Errorf("deleting a rule with targets: %v, want ValidationException", err)
	}
	if _, err := eb.RemoveTargets(ctx, &eventbridge.RemoveTargetsInput{Rule: awssdk.String("orders"), Ids: []string{"q"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := eb.DeleteRule(ctx, &eventbridge.DeleteRuleInput{Name: awssdk.String("orders")}); err != nil {
		t.Fatal(err)
	}
	if _, err := eb.DescribeRule(ctx, &eventbridge.DescribeRuleInput{Name: awssdk.String("orders")}); code(err) != "ResourceNotFoundException" {
		t.Errorf("describing a deleted rule: %v", err)
	}
	targets, err := eb.ListTargetsByRule(ctx, &eventbridge.ListTargetsByRuleInput{Rule: awssdk.String("all-shop")})
	if err != nil || len(targets.Targets) != 1 || awssdk.ToString(targets.Targets[0].Arn) != allARN {
		t.Errorf("targets of all-shop: %+v, %v", targets, err)
	}
}

// TestPutRuleRefusesInvalidPatterns: a pattern without arrays, an operator
// EventBridge does not have and a malformed wildcard are
// InvalidEventPatternException, through the SDK.
func TestPutRuleRefusesInvalidPatterns(t *testing.T) {
	eb := eventbridge.NewFromConfig(client(t, awsemu.New(awsemu.DefaultConfig())))
	for _, pattern := range []string{`{"source":"aws.ec2"}`, `{"source":[{"contains":"ec2"}]}`, `{"source":[{"wildcard":"aws.**"}]}`,
		`{"detail":{"state":[{"exists":"yes"}]}}`} {
		_, err := eb.PutRule(context.Background(), &eventbridge.PutRuleInput{Name: awssdk.String("bad"), EventPattern: awssdk.String(pattern)})
		var invalid *ebtypes.InvalidEventPatternException
		if !errors.As(err, &invalid) {
			t.Errorf("%s: %v, want InvalidEventPatternException", pattern, err)
		}
	}
}

// TestPutEventsRefusesAWSSources: only AWS services send events of their
// sources; a caller's entry with one fails alone with
// NotAuthorizedForSourceException, and nothing is delivered.
func TestPutEventsRefusesAWSSources(t *testing.T) {
	e := awsemu.New(awsemu.DefaultConfig())
	cfg := client(t, e)
	eb, q := eventbridge.NewFromConfig(cfg), sqs.NewFromConfig(cfg)
	url, arn := queue(t, q, "everything")
	rule(t, eb, "everything", `{"source":[{"prefix":""}]}`, arn)
	out, err := eb.PutEvents(context.Background(), &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{
		{Source: awssdk.String("aws.ec2"), DetailType: awssdk.String("EC2 Spot Instance Interruption Warning"),
			Detail: awssdk.String(`{"instance-id":"i-0123456789abcdef0","instance-action":"terminate"}`)},
		{Source: awssdk.String("aws.health"), DetailType: awssdk.String("AWS Health Event"), Detail: awssdk.String(`{}`)},
		{Source: awssdk.String("com.example.shop"), DetailType: awssdk.String("Order Placed"), Detail: awssdk.String(`{}`)},
	}})
	if err != nil || out.FailedEntryCount != 2 {
		t.Fatalf("PutEvents: %+v, %v; want the two aws.* entries refused", out, err)
	}
	for i := range 2 {
		if c := awssdk.ToString(out.Entries[i].ErrorCode); c != "NotAuthorizedForSourceException" {
			t.Errorf("entry %d: error %q, want NotAuthorizedForSourceException", i, c)
		}
	}
	if got := detailTypes(t, q, url); !slices.Equal(got, []string{"Order Placed"}) {
		t.Errorf("delivered %v, want the caller's own event alone", got)
	}
}

// TestEmulatorEventsFollowTheRules: the events the emulator raises itself
// (a spot interruption warning) go through the rules too.
func TestEmulatorEventsFollowTheRules(t *testing.T) {
	e := awsemu.New(awsemu.DefaultConfig())
	cfg := client(t, e)
	q := sqs.NewFromConfig(cfg)
	url, arn := queue(t, q, "interruptions")
	rule(t, eventbridge.NewFromConfig(cfg), "spot", `{"source":["aws.ec2"],"detail-type":["EC2 Spot Instance Interruption Warning"]}`, arn)
	id := spotInstance(t, e)
	if err := e.Interrupt(id); err != nil {
		t.Fatal(err)
	}
	if got := detailTypes(t, q, url); !slices.Equal(got, []string{"EC2 Spot Instance Interruption Warning"}) {
		t.Errorf("queue holds %v, want the warning alone (state changes do not match)", got)
	}
}

// eventBridgeMaySend is a queue policy that lets EventBridge send to the queue.
const eventBridgeMaySend = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"events.amazonaws.com"},` +
	`"Action":"sqs:SendMessage","Resource":"*"}]}`

func queue(t *testing.T, q *sqs.Client, name string) (url, arn string) {
	t.Helper()
	ctx := context.Background()
	// EventBridge may send only to a queue whose policy lets it.
	out, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: awssdk.String(name), Attributes: map[string]string{"Policy": eventBridgeMaySend}})
	if err != nil {
		t.Fatal(err)
	}
	attrs, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	return awssdk.ToString(out.QueueUrl), attrs.Attributes["QueueArn"]
}

func rule(t *testing.T, eb *eventbridge.Client, name, pattern, queueARN string) {
	t.Helper()
	ctx := context.Background()
	if _, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: awssdk.String(name), EventPattern: awssdk.String(pattern)}); err != nil {
		t.Fatal(err)
	}
	if _, err := eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: awssdk.String(name),
		Targets: []ebtypes.Target{{Id: awssdk.String("q"), Arn: awssdk.String(queueARN)}}}); err != nil {
		t.Fatal(err)
	}
}

// detailTypes receives everything in the queue and returns the events'
// detail types.
func detailTypes(t *testing.T, q *sqs.Client, url string) []string {
	t.Helper()
	out, err := q.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: awssdk.String(url), MaxNumberOfMessages: 10})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range out.Messages {
		var ev awsemu.Event
		if err := json.Unmarshal([]byte(awssdk.ToString(m.Body)), &ev); err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.DetailType)
	}
	return got
}

// spotInstance launches one spot instance in process.
func spotInstance(t *testing.T, e *awsemu.Emulator) string {
	t.Helper()
	subnets, _ := e.SeedDefaultNetwork("c")
	lt := templateFor(t, e, e.SeedEKSImages("1.37"))
	res, err := e.CreateFleet(awsemu.FleetRequest{CapacityType: awsemu.CapacitySpot, TotalTargetCapacity: 1,
		Overrides: []awsemu.FleetOverride{{LaunchTemplateID: lt, InstanceType: "m6i.large", SubnetID: subnets[0]}}})
	if err != nil || len(res.Instances) != 1 {
		t.Fatalf("launching a spot instance: %+v, %v", res, err)
	}
	return res.Instances[0].InstanceIDs[0]
}
