package awsemu_test

import (
	"context"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

// TestEventBridgeSendsOnlyWhereTheQueuePolicyLetsIt has EC2 warn of a spot
// interruption while the queue's policy changes: no policy, a grant to
// another rule, and a grant to the matching rule; only the last delivers.
func TestEventBridgeSendsOnlyWhereTheQueuePolicyLetsIt(t *testing.T) {
	e := awsemu.New(awsemu.DefaultConfig())
	c := client(t, e)
	q, eb := sqs.NewFromConfig(c), eventbridge.NewFromConfig(c)
	ctx := context.Background()
	out, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: awssdk.String("warnings")})
	if err != nil {
		t.Fatal(err)
	}
	spot := newWorld(t, e).launch(t, awsemu.CapacitySpot)
	rule(t, eb, "spot", `{"source":["aws.ec2"],"detail-type":["EC2 Spot Instance Interruption Warning"]}`, "arn:aws:sqs:us-east-1:123456789012:warnings")
	grant := func(sourceARN string) string {
		return `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"events.amazonaws.com"},"Action":"sqs:SendMessage",` +
			`"Resource":"arn:aws:sqs:us-east-1:123456789012:warnings","Condition":{"ArnEquals":{"aws:SourceArn":"` + sourceARN + `"}}}]}`
	}
	for _, tc := range []struct {
		name, policy string
		want         int
	}{
		{"no policy", "", 0},
		{"a grant to another rule", grant("arn:aws:events:us-east-1:123456789012:rule/other"), 0},
		{"a grant to this rule", grant("arn:aws:events:us-east-1:123456789012:rule/spot"), 1},
	} {
		if _, err := q.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: out.QueueUrl, Attributes: map[string]string{"Policy": tc.policy}}); err != nil {
			t.Fatal(err)
		}
		q.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: out.QueueUrl})
		if err := e.Interrupt(spot); err != nil {
			t.Fatal(err)
		}
		if got := len(e.QueueMessages("warnings")); got != tc.want {
			t.Errorf("%s: %d messages delivered, want %d", tc.name, got, tc.want)
		}
	}
}

// TestAnEventSourceMappingNeedsTheRolesPermissions: Lambda checks, before it
// maps a queue, that the function's role may receive, delete and read the
// queue's attributes.
func TestAnEventSourceMappingNeedsTheRolesPermissions(t *testing.T) {
	e := awsemu.New(awsemu.DefaultConfig())
	c := client(t, e)
	_, arn := queue(t, sqs.NewFromConfig(c), "interruptions")
	admin := iam.NewFromConfig(c)
	executionRole(t, admin, "arn:aws:sqs:us-east-1:123456789012:another-queue")
	l := lambda.NewFromConfig(c)
	createFunction(t, l, "interruption", zipOf(t, "x"), 30)
	mapQueue := func() error {
		_, err := l.CreateEventSourceMapping(context.Background(), &lambda.CreateEventSourceMappingInput{EventSourceArn: awssdk.String(arn),
			FunctionName: awssdk.String("interruption")})
		return err
	}
	if err := mapQueue(); code(err) != "InvalidParameterValueException" {
		t.Fatalf("a role allowed on another queue: %v, want InvalidParameterValueException", err)
	}
	doc := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["sqs:ReceiveMessage","sqs:DeleteMessage","sqs:GetQueueAttributes"],"Resource":"` + arn + `"}]}`
	if _, err := admin.PutRolePolicy(context.Background(), &iam.PutRolePolicyInput{RoleName: awssdk.String("interruption-lambda"),
		PolicyName: awssdk.String("queue"), PolicyDocument: awssdk.String(doc)}); err != nil {
		t.Fatal(err)
	}
	if err := mapQueue(); err != nil {
		t.Fatalf("the role allowed on the queue: %v", err)
	}
	_ = e.Shutdown()
}
