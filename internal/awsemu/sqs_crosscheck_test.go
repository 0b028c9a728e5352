package awsemu_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

// TestSQSAgreesWithFauxqs holds one conversation, through the real SQS client,
// with the emulator and with fauxqs (an SQS emulator no one here wrote,
// installed by make tools), and checks that each answers every step as SQS
// documents it. Error codes are the ones the client reports: SQS's legacy
// codes from its x-amzn-query-error header, as the SQS model in the SDK names
// them. Where the two part, read AWS's SQS API reference before changing the
// emulator or the expected answer.
func TestSQSAgreesWithFauxqs(t *testing.T) {
	backends := []struct {
		name string
		url  func(t *testing.T) string
		// departs lists the steps this backend answers unlike SQS: step -> its answer.
		departs map[string]string
	}{
		{name: "awsemu", url: func(t *testing.T) string {
			srv := awsemu.New(awsemu.DefaultConfig()).Start()
			t.Cleanup(srv.Close)
			return srv.URL
		}},
		{name: "fauxqs", url: startFauxqs, departs: map[string]string{
			// The SQS model's awsQueryError for QueueNameExists is QueueAlreadyExists.
			"create again with another visibility timeout": "AWS.SimpleQueueService.QueueNameExists",
			// SQS refuses a receipt handle it never issued; fauxqs ignores it.
			"delete with a bogus receipt handle": "ok",
		}},
	}
	sqsAnswers := []string{
		"get url of a missing queue: AWS.SimpleQueueService.NonExistentQueue",
		"create: ok, url ends /interruptions",
		"create again with the same attributes: ok, same url",
		"create again with another visibility timeout: QueueAlreadyExists",
		"get url: ok, same url",
		"send 2 (the client checks each body's MD5): ok",
		"attributes: 2 visible, 0 in flight",
		"receive until 2 arrive: the bodies sent, each received once",
		"receive while both are in flight: 0 messages",
		"attributes: 0 visible, 2 in flight",
		"delete with a bogus receipt handle: ReceiptHandleIsInvalid",
		"delete both: ok",
		"attributes: 0 visible, 0 in flight",
		"long poll while a message is sent: that message",
		"purge, then receive: 0 messages",
		"delete the queue, then get its url: AWS.SimpleQueueService.NonExistentQueue",
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			want := slices.Clone(sqsAnswers)
			for i, line := range want {
				step, _, _ := strings.Cut(line, ": ")
				if answer, ok := b.departs[step]; ok {
					want[i] = step + ": " + answer
				}
			}
			got := conversation(t, sqsClient(b.url(t)))
			if !slices.Equal(got, want) {
				t.Errorf("%s answered:\n  %s\nwant:\n  %s", b.name, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
		})
	}
}

func sqsClient(url string) *sqs.Client {
	return sqs.NewFromConfig(awssdk.Config{Region: "us-east-1", BaseEndpoint: awssdk.String(url), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEMULATOR", "secret", "")})
}

// transcript records one line per step of a conversation.
type transcript struct {
	t     *testing.T
	lines []string
}

func (tr *transcript) say(format string, args ...any) {
	tr.lines = append(tr.lines, fmt.Sprintf(format, args...))
}

// outcome is "ok", or the API error code of err.
func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	if c := code(err); c != "" {
		return c
	}
	return err.Error()
}

// must stops the conversation on an error a later step cannot do without.
func (tr *transcript) must(step string, err error) {
	tr.t.Helper()
	if err != nil {
		tr.t.Fatalf("%s: %v (so far:\n  %s)", step, err, strings.Join(tr.lines, "\n  "))
	}
}

func conversation(t *testing.T, c *sqs.Client) []string {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	tr := &transcript{t: t}
	_, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: awssdk.String("missing")})
	if err != nil && !errors.As(err, new(*sqstypes.QueueDoesNotExist)) {
		t.Errorf("a missing queue's error %T does not unwrap to *types.QueueDoesNotExist", err)
	}
	tr.say("get url of a missing queue: %s", outcome(err))
	url := createQueue(ctx, tr, c)
	bodies := []string{`{"detail-type":"EC2 Spot Instance Interruption Warning","detail":{"instance-id":"i-1"}}`, "second ✓"}
	for _, b := range bodies {
		_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: awssdk.String(url), MessageBody: awssdk.String(b)})
		tr.must("sending", err)
	}
	tr.say("send %d (the client checks each body's MD5): ok", len(bodies))
	tr.say("attributes: %s", counts(ctx, tr, c, url))
	received := receiveUntil(ctx, tr, c, url, len(bodies))
	tr.say("receive until %d arrive: %s", len(bodies), sameBodies(received, bodies))
	tr.say("receive while both are in flight: %d messages", len(receive(ctx, tr, c, url, 0)))
	tr.say("attributes: %s", counts(ctx, tr, c, url))
	_, err = c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: awssdk.String(url), ReceiptHandle: awssdk.String("bogus")})
	tr.say("delete with a bogus receipt handle: %s", outcome(err))
	for _, m := range received {
		_, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: awssdk.String(url), ReceiptHandle: m.ReceiptHandle})
		tr.must("deleting", err)
	}
	tr.say("delete both: ok")
	tr.say("attributes: %s", counts(ctx, tr, c, url))
	tr.say("long poll while a message is sent: %s", longPoll(ctx, tr, c, url))
	purge(ctx, tr, c, url)
	_, err = c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: awssdk.String(url)})
	tr.must("deleting the queue", err)
	_, err = c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: awssdk.String("interruptions")})
	tr.say("delete the queue, then get its url: %s", outcome(err))
	return tr.lines
}

func createQueue(ctx context.Context, tr *transcript, c *sqs.Client) string {
	create := func(visibility string) (string, error) {
		out, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: awssdk.String("interruptions"),
			Attributes: map[string]string{string(sqstypes.QueueAttributeNameVisibilityTimeout): visibility}})
		if err != nil {
			return "", err
		}
		return awssdk.ToString(out.QueueUrl), nil
	}
	url, err := create("30")
	tr.must("creating the queue", err)
	tr.say("create: ok, url ends %s", url[strings.LastIndex(url, "/"):])
	again, err := create("30")
	tr.say("create again with the same attributes: %s, %s", outcome(err), same(again, url))
	_, err = create("5")
	tr.say("create again with another visibility timeout: %s", outcome(err))
	out, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: awssdk.String("interruptions")})
	tr.must("getting the url", err)
	tr.say("get url: ok, %s", same(awssdk.ToString(out.QueueUrl), url))
	return url
}

func same(got, want string) string {
	if got == want {
		return "same url"
	}
	return fmt.Sprintf("url %q, not %q", got, want)
}

// counts reads the queue's visible and in-flight message counts.
func counts(ctx context.Context, tr *transcript, c *sqs.Client, url string) string {
	visible, inFlight := sqstypes.QueueAttributeNameApproximateNumberOfMessages, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible
	out, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: awssdk.String(url),
		AttributeNames: []sqstypes.QueueAttributeName{visible, inFlight}})
	tr.must("getting the attributes", err)
	return fmt.Sprintf("%s visible, %s in flight", out.Attributes[string(visible)], out.Attributes[string(inFlight)])
}

func receive(ctx context.Context, tr *transcript, c *sqs.Client, url string, wait int32) []sqstypes.Message {
	out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: awssdk.String(url), MaxNumberOfMessages: 10, WaitTimeSeconds: wait})
	tr.must("receiving", err)
	return out.Messages
}

// receiveUntil long-polls until n messages have arrived (SQS may return
// fewer than are there) or the context ends.
func receiveUntil(ctx context.Context, tr *transcript, c *sqs.Client, url string, n int) []sqstypes.Message {
	var got []sqstypes.Message
	for len(got) < n && ctx.Err() == nil {
		got = append(got, receive(ctx, tr, c, url, 1)...)
	}
	return got
}

// sameBodies says whether the received messages carry exactly the bodies sent
// (a standard queue keeps no order), each once.
func sameBodies(received []sqstypes.Message, sent []string) string {
	var got []string
	for _, m := range received {
		got = append(got, awssdk.ToString(m.Body))
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(sent))
	if slices.Equal(got, want) {
		return "the bodies sent, each received once"
	}
	return fmt.Sprintf("bodies %q, want %q", got, want)
}

// longPoll starts a 10 s long poll, sends a message while it waits (or just
// before: either way the poll must return it) and reports what it returned.
func longPoll(ctx context.Context, tr *transcript, c *sqs.Client, url string) string {
	type result struct {
		msgs []sqstypes.Message
		err  error
	}
	done := make(chan result, 1)
	go func() {
		out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: awssdk.String(url), MaxNumberOfMessages: 10, WaitTimeSeconds: 10})
		if err != nil {
			done <- result{err: err}
			return
		}
		done <- result{msgs: out.Messages}
	}()
	_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: awssdk.String(url), MessageBody: awssdk.String("meanwhile")})
	tr.must("sending during the long poll", err)
	r := <-done
	tr.must("long polling", r.err)
	if len(r.msgs) == 1 && awssdk.ToString(r.msgs[0].Body) == "meanwhile" {
		_, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: awssdk.String(url), ReceiptHandle: r.msgs[0].ReceiptHandle})
		tr.must("deleting the long-polled message", err)
		return "that message"
	}
	return fmt.Sprintf("%d messages", len(r.msgs))
}

func purge(ctx context.Context, tr *transcript, c *sqs.Client, url string) {
	_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: awssdk.String(url), MessageBody: awssdk.String("to purge")})
	tr.must("sending before the purge", err)
	_, err = c.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: awssdk.String(url)})
	tr.must("purging", err)
	tr.say("purge, then receive: %d messages", len(receive(ctx, tr, c, url, 0)))
}
