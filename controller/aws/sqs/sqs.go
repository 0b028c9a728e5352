// Package sqs reads the interruption queue: receive, then delete only what
// has been handled.
package sqs

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stowage-dev/stowage/controller/aws/sdk"
)

// Message is one received message.
type Message struct {
	ID            string
	Body          string
	ReceiptHandle string
}

// Provider is bound to one queue.
type Provider struct {
	api  sdk.SQSAPI
	url  string
	wait int32
}

// NewProvider looks the queue's URL up by name. wait is the long-poll time in
// seconds (0 to 20).
func NewProvider(ctx context.Context, api sdk.SQSAPI, queue string, wait int32) (*Provider, error) {
	out, err := api.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(queue)})
	if err != nil {
		return nil, fmt.Errorf("getting the url of queue %s: %w", queue, err)
	}
	return &Provider{api: api, url: aws.ToString(out.QueueUrl), wait: wait}, nil
}

// URL is the queue's URL.
func (p *Provider) URL() string { return p.url }

// Receive long-polls for up to ten messages.
func (p *Provider) Receive(ctx context.Context) ([]Message, error) {
	out, err := p.api.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(p.url), MaxNumberOfMessages: 10, WaitTimeSeconds: p.wait,
	})
	if err != nil {
		return nil, fmt.Errorf("receiving messages: %w", err)
	}
	msgs := make([]Message, 0, len(out.Messages))
	for _, m := range out.Messages {
		msgs = append(msgs, Message{ID: aws.ToString(m.MessageId), Body: aws.ToString(m.Body), ReceiptHandle: aws.ToString(m.ReceiptHandle)})
	}
	return msgs, nil
}

// Delete acknowledges a handled message.
func (p *Provider) Delete(ctx context.Context, m Message) error {
	if _, err := p.api.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(p.url), ReceiptHandle: aws.String(m.ReceiptHandle)}); err != nil {
		return fmt.Errorf("deleting message %s: %w", m.ID, err)
	}
	return nil
}

// Send enqueues a message (tests and the simulator use it).
func (p *Provider) Send(ctx context.Context, body string) (string, error) {
	out, err := p.api.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(p.url), MessageBody: aws.String(body)})
	if err != nil {
		return "", fmt.Errorf("sending message: %w", err)
	}
	return aws.ToString(out.MessageId), nil
}
