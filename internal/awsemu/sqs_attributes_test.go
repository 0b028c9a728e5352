package awsemu_test

import (
	"context"
	"crypto/x509"
	"net/http/httptest"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

func TestQueueAttributesRedriveRetentionAndTags(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC))
	cfg := awsemu.DefaultConfig()
	cfg.Clock = clk
	e := awsemu.New(cfg)
	c := sqs.NewFromConfig(client(t, e))
	ctx := context.Background()
	dlq, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: awssdk.String("events-dlq"), Tags: map[string]string{"team": "platform"}})
	if err != nil {
		t.Fatal(err)
	}
	main, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: awssdk.String("events"), Attributes: map[string]string{
		"MessageRetentionPeriod": "300", "VisibilityTimeout": "10",
		"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:123456789012:events-dlq","maxReceiveCount":2}`}})
	if err != nil {
		t.Fatal(err)
	}
	attrs, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: main.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{"All"}})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"MessageRetentionPeriod": "300", "SqsManagedSseEnabled": "true", "DelaySeconds": "0",
		"QueueArn": "arn:aws:sqs:us-east-1:123456789012:events", "VisibilityTimeout": "10"} {
		if attrs.Attributes[k] != want {
			t.Errorf("%s = %q, want %q", k, attrs.Attributes[k], want)
		}
	}
	for _, bad := range []struct {
		attrs map[string]string
		code  string
	}{
		{map[string]string{"MessageRetentionPeriod": "30"}, "InvalidAttributeValue"},
		{map[string]string{"Colour": "blue"}, "InvalidAttributeName"},
		{map[string]string{"Policy": `{"Statement":[{"Effect":"Allow","Action":"sqs:*"}]}`}, "InvalidAttributeValue"},
		{map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:123456789012:nowhere","maxReceiveCount":2}`}, "InvalidAttributeValue"},
		{map[string]string{"KmsMasterKeyId": "alias/aws/sqs", "SqsManagedSseEnabled": "true"}, "InvalidAttributeName"},
	} {
		if _, err := c.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: main.QueueUrl, Attributes: bad.attrs}); code(err) != bad.code {
			t.Errorf("setting %v: %v, want %s", bad.attrs, err, bad.code)
		}
	}
	// Received twice and not deleted: the third receive finds it in the dead-letter queue.
	if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: main.QueueUrl, MessageBody: awssdk.String("poison")}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: main.QueueUrl, MaxNumberOfMessages: 10})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{true: 1, false: 0}[i < 2]; len(out.Messages) != want {
			t.Fatalf("receive %d got %d messages, want %d", i+1, len(out.Messages), want)
		}
		clk.Step(11 * time.Second)
	}
	if got := e.QueueMessages("events-dlq"); len(got) != 1 || got[0] != "poison" {
		t.Errorf("dead-letter queue holds %v, want the poison message", got)
	}
	// Older than the retention period: gone without a receive.
	if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: main.QueueUrl, MessageBody: awssdk.String("stale")}); err != nil {
		t.Fatal(err)
	}
	clk.Step(301 * time.Second)
	if out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: main.QueueUrl}); err != nil || len(out.Messages) != 0 {
		t.Errorf("a message past retention was received: %v, %v", out, err)
	}
	if _, err := c.TagQueue(ctx, &sqs.TagQueueInput{QueueUrl: dlq.QueueUrl, Tags: map[string]string{"env": "prod"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UntagQueue(ctx, &sqs.UntagQueueInput{QueueUrl: dlq.QueueUrl, TagKeys: []string{"team"}}); err != nil {
		t.Fatal(err)
	}
	tags, err := c.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: dlq.QueueUrl})
	if err != nil || len(tags.Tags) != 1 || tags.Tags["env"] != "prod" {
		t.Errorf("tags %v, %v; want env=prod alone", tags, err)
	}
}

// TestQueuePolicyDeniesPlainHTTP serves the emulator over TLS and over plain
// HTTP: a queue policy that denies non-TLS access refuses the second even to a
// role its own policy allows.
func TestQueuePolicyDeniesPlainHTTP(t *testing.T) {
	e := awsemu.New(awsemu.DefaultConfig())
	plain := client(t, e)
	tlsSrv := httptest.NewTLSServer(e.Handler())
	t.Cleanup(tlsSrv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(tlsSrv.Certificate())
	secure := plain.Copy()
	secure.BaseEndpoint, secure.HTTPClient = awssdk.String(tlsSrv.URL), tlsSrv.Client()
	ctx := context.Background()
	q, err := sqs.NewFromConfig(secure).CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: awssdk.String("q"), Attributes: map[string]string{
		"Policy": `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"sqs:*","Resource":"*","Condition":{"Bool":{"aws:SecureTransport":"false"}}}]}`}})
	if err != nil {
		t.Fatal(err)
	}
	admin := iam.NewFromConfig(plain)
	admin.CreateRole(ctx, &iam.CreateRoleInput{RoleName: awssdk.String("reader"), AssumeRolePolicyDocument: awssdk.String(nodeTrust)})
	if _, err := admin.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: awssdk.String("reader"), PolicyName: awssdk.String("p"),
		PolicyDocument: awssdk.String(`{"Statement":{"Effect":"Allow","Action":"sqs:ReceiveMessage","Resource":"arn:aws:sqs:us-east-1:123456789012:q"}}`)}); err != nil {
		t.Fatal(err)
	}
	over := func(cfg awssdk.Config) error {
		_, err := sqs.NewFromConfig(asRole(t, e, cfg, "reader", "us-east-1")).ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl})
		return err
	}
	if err := over(secure); err != nil {
		t.Errorf("receiving over TLS: %v", err)
	}
	if err := over(plain); code(err) != "AccessDenied" {
		t.Errorf("receiving over plain HTTP: %v, want AccessDenied from the queue's policy", err)
	}
	_, err = sqs.NewFromConfig(asRole(t, e, secure, "reader", "us-east-1")).SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: awssdk.String("x")})
	if code(err) != "AccessDenied" {
		t.Errorf("sending, which neither policy allows: %v, want AccessDenied", err)
	}
}
