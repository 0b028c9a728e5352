package sqs_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	stowsqs "github.com/stowage-dev/stowage/controller/aws/sqs"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

// TestInterruptionQueue runs the same conversation against our emulator and
// against fauxqs, an SQS emulator no one here wrote.
func TestInterruptionQueue(t *testing.T) {
	backends := map[string]func(t *testing.T) string{
		"awsemu": func(t *testing.T) string {
			srv := awsemu.New(awsemu.DefaultConfig()).Start()
			t.Cleanup(srv.Close)
			return srv.URL
		},
		"fauxqs": startFauxqs,
	}
	for name, start := range backends {
		t.Run(name, func(t *testing.T) { conversation(t, client(start(t))) })
	}
}

func client(url string) *sqs.Client {
	return sqs.NewFromConfig(awssdk.Config{Region: "us-east-1", BaseEndpoint: awssdk.String(url),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEMULATOR", "secret", "")})
}

func conversation(t *testing.T, c *sqs.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := stowsqs.NewProvider(ctx, c, "missing", 0); !errors.As(err, new(*sqstypes.QueueDoesNotExist)) {
		t.Fatalf("missing queue: error %v, want QueueDoesNotExist", err)
	}
	if _, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: awssdk.String("interruptions")}); err != nil {
		t.Fatalf("creating queue: %v", err)
	}
	p, err := stowsqs.NewProvider(ctx, c, "interruptions", 1)
	if err != nil {
		t.Fatalf("new provider: %v", err)
	}
	bodies := []string{`{"detail-type":"EC2 Spot Instance Interruption Warning","detail":{"instance-id":"i-1"}}`, "second ✓"}
	for _, b := range bodies {
		if _, err := p.Send(ctx, b); err != nil {
			t.Fatalf("send: %v", err)
		}
	}
	got := receiveAll(ctx, t, p, len(bodies))
	for i, m := range got {
		if m.Body != bodies[i] {
			t.Errorf("message %d body %q, want %q", i, m.Body, bodies[i])
		}
		if err := p.Delete(ctx, m); err != nil {
			t.Fatalf("delete: %v", err)
		}
	}
	if left, err := p.Receive(ctx); err != nil || len(left) != 0 {
		t.Fatalf("after deletes: %d messages, %v; want none", len(left), err)
	}
}

func receiveAll(ctx context.Context, t *testing.T, p *stowsqs.Provider, n int) []stowsqs.Message {
	var got []stowsqs.Message
	for len(got) < n && ctx.Err() == nil {
		msgs, err := p.Receive(ctx)
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		got = append(got, msgs...)
	}
	if len(got) != n {
		t.Fatalf("received %d messages, want %d", len(got), n)
	}
	return got
}

// startFauxqs runs fauxqs through its launcher script. Without node it skips,
// except in CI (CI=true), where a missing node fails the test.
func startFauxqs(t *testing.T) string {
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node is required for the fauxqs tests in CI: %v", err)
		}
		t.Skipf("node is not installed: %v", err)
	}
	script, _ := filepath.Abs("../../../internal/awsemu/fauxqs/fauxqs.sh")
	cmd := exec.Command("bash", script)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting fauxqs: %v", err)
	}
	t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	return readAddress(t, stdout)
}

func readAddress(t *testing.T, r io.Reader) string {
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if addr, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
				lines <- addr
				return
			}
		}
		close(lines)
	}()
	select {
	case addr, ok := <-lines:
		if !ok {
			t.Fatalf("fauxqs exited before listening")
		}
		return addr
	case <-time.After(3 * time.Minute): // a first npm install can take a while
		t.Fatalf("fauxqs did not start within 3 minutes")
	}
	return ""
}
