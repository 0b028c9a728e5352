package awsemu_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"k8s.io/apimachinery/pkg/util/wait"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

// sqsEvent is the SQS event as a function receives it.
type sqsEvent struct {
	Records []struct {
		MessageID      string            `json:"messageId"`
		Body           string            `json:"body"`
		Attributes     map[string]string `json:"attributes"`
		EventSource    string            `json:"eventSource"`
		EventSourceARN string            `json:"eventSourceARN"`
		MD5OfBody      string            `json:"md5OfBody"`
	} `json:"Records"`
}

// reportBad answers an SQS batch by reporting the records whose body says
// "bad" as failed.
func reportBad(_ awsemu.FunctionCode, payload []byte) ([]byte, error) {
	var ev sqsEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, err
	}
	failures := []map[string]string{}
	for _, r := range ev.Records {
		if strings.Contains(r.Body, "bad") {
			failures = append(failures, map[string]string{"itemIdentifier": r.MessageID})
		}
	}
	return json.Marshal(map[string]any{"batchItemFailures": failures})
}

type esmWorld struct {
	e       *awsemu.Emulator
	clk     *clocktesting.FakeClock
	rt      *goRuntime
	l       *lambda.Client
	q       *sqs.Client
	url     string
	arn     string
	mapping string
}

func newESMWorld(t *testing.T, handle func(awsemu.FunctionCode, []byte) ([]byte, error)) *esmWorld {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC))
	cfg := awsemu.DefaultConfig()
	cfg.Clock = clk
	w := &esmWorld{e: awsemu.New(cfg), clk: clk, rt: &goRuntime{handle: handle}}
	w.e.SetFunctionRuntime(w.rt)
	t.Cleanup(func() { _ = w.e.Shutdown() })
	c := client(t, w.e)
	w.l, w.q = lambda.NewFromConfig(c), sqs.NewFromConfig(c)
	w.url, w.arn = queue(t, w.q, "interruptions")
	executionRole(t, iam.NewFromConfig(c), w.arn)
	createFunction(t, w.l, "interruption", zipOf(t, "x"), 30)
	return w
}

func (w *esmWorld) send(t *testing.T, bodies ...string) []string {
	t.Helper()
	var ids []string
	for _, b := range bodies {
		out, err := w.q.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: awssdk.String(w.url), MessageBody: awssdk.String(b)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, awssdk.ToString(out.MessageId))
	}
	return ids
}

func (w *esmWorld) mapQueue(t *testing.T, enabled bool) {
	t.Helper()
	out, err := w.l.CreateEventSourceMapping(context.Background(), &lambda.CreateEventSourceMappingInput{
		EventSourceArn: awssdk.String(w.arn), FunctionName: awssdk.String("interruption"), BatchSize: awssdk.Int32(10),
		Enabled: awssdk.Bool(enabled), FunctionResponseTypes: []lambdatypes.FunctionResponseType{lambdatypes.FunctionResponseTypeReportBatchItemFailures},
	})
	if err != nil {
		t.Fatalf("CreateEventSourceMapping: %v", err)
	}
	w.mapping = awssdk.ToString(out.UUID)
}

// delivered waits until the mapping has handed the function n records.
func (w *esmWorld) delivered(t *testing.T, n int) []awsemu.Invocation {
	t.Helper()
	var invs []awsemu.Invocation
	eventually(t, func() error {
		invs = w.e.Invocations(w.mapping)
		got := 0
		for _, inv := range invs {
			got += len(inv.MessageIDs)
		}
		if got != n {
			return fmt.Errorf("%d records delivered, want %d", got, n)
		}
		return nil
	})
	return invs
}

func eventually(t *testing.T, check func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		last = check()
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("still failing: %v", last)
	}
}

// TestEventSourceMappingDeletesWhatSucceededAndRedeliversReportedFailures:
// 25 messages reach the function in batches of at most ten; the records it
// reports failed stay on the queue and come back once the visibility
// timeout passes, and only they; everything else is deleted.
func TestEventSourceMappingDeletesWhatSucceededAndRedeliversReportedFailures(t *testing.T) {
	w := newESMWorld(t, reportBad)
	var bodies []string
	for i := range 25 {
		bodies = append(bodies, map[bool]string{true: "bad", false: "good"}[i%9 == 4]+fmt.Sprint(i))
	}
	ids := w.send(t, bodies...)
	bad := []string{ids[4], ids[13], ids[22]}
	w.mapQueue(t, true)
	invs := w.delivered(t, 25)
	var failed []string
	for _, inv := range invs {
		if len(inv.MessageIDs) > 10 || inv.Error != "" {
			t.Errorf("invocation %+v: more than ten records, or an error", inv)
		}
		failed = append(failed, inv.Failed...)
	}
	slices.Sort(failed)
	slices.Sort(bad)
	if !slices.Equal(failed, bad) {
		t.Fatalf("reported failures %v, want %v", failed, bad)
	}
	if left := w.e.QueueMessages("interruptions"); len(left) != 3 {
		t.Fatalf("%d messages left on the queue, want the 3 that failed", len(left))
	}
	eventually(t, func() error { return hasWaiters(w.clk) })
	w.clk.Step(31 * time.Second)
	again := w.delivered(t, 28)[len(invs):]
	var redelivered []string
	for _, inv := range again {
		redelivered = append(redelivered, inv.MessageIDs...)
	}
	slices.Sort(redelivered)
	if !slices.Equal(redelivered, bad) {
		t.Errorf("redelivered %v after the visibility timeout, want %v", redelivered, bad)
	}
	var ev sqsEvent
	_ = json.Unmarshal(w.rt.payloads[len(w.rt.payloads)-1], &ev)
	if r := ev.Records[0]; r.Attributes["ApproximateReceiveCount"] != "2" || r.EventSource != "aws:sqs" || r.EventSourceARN != w.arn || r.MD5OfBody == "" {
		t.Errorf("redelivered record %+v: want receive count 2 and the SQS event fields", r)
	}
}

func hasWaiters(clk *clocktesting.FakeClock) error {
	if !clk.HasWaiters() {
		return fmt.Errorf("the poller is not waiting on the clock yet")
	}
	return nil
}

// TestAFailedBatchStaysWhole: a function error, or an answer naming a
// record that is not in the batch, leaves every record on the queue.
func TestAFailedBatchStaysWhole(t *testing.T) {
	for name, handle := range map[string]func(awsemu.FunctionCode, []byte) ([]byte, error){
		"function error": func(awsemu.FunctionCode, []byte) ([]byte, error) {
			return nil, &awsemu.FunctionError{Type: "Runtime.ExitError", Message: "exit status 2"}
		},
		"unknown item": func(awsemu.FunctionCode, []byte) ([]byte, error) {
			return []byte(`{"batchItemFailures":[{"itemIdentifier":"not-a-record"}]}`), nil
		},
		"bad key": func(awsemu.FunctionCode, []byte) ([]byte, error) {
			return []byte(`{"batchItemFailures":[{"itemId":"x"}]}`), nil
		},
		"not json": func(awsemu.FunctionCode, []byte) ([]byte, error) { return []byte(`{{`), nil },
	} {
		t.Run(name, func(t *testing.T) {
			w := newESMWorld(t, handle)
			w.send(t, "one", "two", "three")
			w.mapQueue(t, true)
			invs := w.delivered(t, 3)
			if invs[0].Error == "" || len(invs[0].Deleted) != 0 {
				t.Errorf("invocation %+v: want an error and nothing deleted", invs[0])
			}
			if left := w.e.QueueMessages("interruptions"); len(left) != 3 {
				t.Errorf("%d messages left, want all 3", len(left))
			}
		})
	}
}

// TestMappingLifecycle: a disabled mapping delivers nothing until enabled;
// it reads back, lists, and once deleted is gone. Lambda's rules hold: the
// function's timeout within the queue's visibility timeout, one mapping per
// queue and function, at most ten records without a batching window.
func TestMappingLifecycle(t *testing.T) {
	w := newESMWorld(t, reportBad)
	ctx := context.Background()
	w.mapQueue(t, false)
	w.send(t, "good")
	got, err := w.l.GetEventSourceMapping(ctx, &lambda.GetEventSourceMappingInput{UUID: awssdk.String(w.mapping)})
	if err != nil || awssdk.ToString(got.State) != "Disabled" || len(w.e.Invocations(w.mapping)) != 0 {
		t.Fatalf("a disabled mapping: %+v, %v, %d invocations", got, err, len(w.e.Invocations(w.mapping)))
	}
	if _, err := w.l.UpdateEventSourceMapping(ctx, &lambda.UpdateEventSourceMappingInput{UUID: awssdk.String(w.mapping), Enabled: awssdk.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	w.delivered(t, 1)
	list, err := w.l.ListEventSourceMappings(ctx, &lambda.ListEventSourceMappingsInput{FunctionName: awssdk.String("interruption")})
	if err != nil || len(list.EventSourceMappings) != 1 || awssdk.ToString(list.EventSourceMappings[0].State) != "Enabled" {
		t.Fatalf("ListEventSourceMappings: %+v, %v", list, err)
	}
	_, err = w.l.CreateEventSourceMapping(ctx, &lambda.CreateEventSourceMappingInput{EventSourceArn: awssdk.String(w.arn), FunctionName: awssdk.String("interruption")})
	var conflict *lambdatypes.ResourceConflictException
	if !errorsAs(err, &conflict) {
		t.Errorf("a second mapping of the queue: %v, want ResourceConflictException", err)
	}
	if _, err := w.l.DeleteEventSourceMapping(ctx, &lambda.DeleteEventSourceMappingInput{UUID: awssdk.String(w.mapping)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() error {
		_, err := w.l.GetEventSourceMapping(ctx, &lambda.GetEventSourceMappingInput{UUID: awssdk.String(w.mapping)})
		var nf *lambdatypes.ResourceNotFoundException
		if !errorsAs(err, &nf) {
			return fmt.Errorf("GetEventSourceMapping after delete: %v", err)
		}
		return nil
	})
	createFunction(t, w.l, "slow", zipOf(t, "x"), 60)
	var invalid *lambdatypes.InvalidParameterValueException
	if _, err := w.l.CreateEventSourceMapping(ctx, &lambda.CreateEventSourceMappingInput{EventSourceArn: awssdk.String(w.arn), FunctionName: awssdk.String("slow")}); !errorsAs(err, &invalid) {
		t.Errorf("a function slower than the visibility timeout: %v, want InvalidParameterValueException", err)
	}
	if _, err := w.l.CreateEventSourceMapping(ctx, &lambda.CreateEventSourceMappingInput{EventSourceArn: awssdk.String(w.arn),
		FunctionName: awssdk.String("interruption"), BatchSize: awssdk.Int32(11)}); !errorsAs(err, &invalid) {
		t.Errorf("eleven records without a window: %v, want InvalidParameterValueException", err)
	}
}

// executionRole makes the functions' role, with what Lambda's poller needs
// on the queue: Lambda checks it before it maps the queue.
func executionRole(t *testing.T, c *iam.Client, queueARN string) {
	t.Helper()
	ctx := context.Background()
	name := awssdk.String(roleARN[strings.LastIndex(roleARN, "/")+1:])
	trust := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole"}]}`
	if _, err := c.CreateRole(ctx, &iam.CreateRoleInput{RoleName: name, AssumeRolePolicyDocument: awssdk.String(trust)}); err != nil {
		t.Fatal(err)
	}
	doc := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["sqs:ReceiveMessage","sqs:DeleteMessage","sqs:GetQueueAttributes"],` +
		`"Resource":"` + queueARN + `"}]}`
	if _, err := c.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: name, PolicyName: awssdk.String("queue"), PolicyDocument: awssdk.String(doc)}); err != nil {
		t.Fatal(err)
	}
}
