package awsemu_test

import (
	"context"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

// TestANewInstanceIsUnknownForTheVisibilityDelay: as EC2's eventual
// consistency may (Amazon EC2 API, "Eventual consistency"), a new instance is
// InvalidInstanceID.NotFound to DescribeInstances and TerminateInstances for
// Config.VisibilityDelay, and absent from filtered answers; a
// TerminateInstances refused then leaves it running. After the delay both
// calls see it.
func TestANewInstanceIsUnknownForTheVisibilityDelay(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC))
	cfg := awsemu.DefaultConfig()
	cfg.Clock, cfg.PendingDelay, cfg.VisibilityDelay = clk, 0, 10*time.Second
	e := awsemu.New(cfg)
	w := newWorld(t, e)
	clk.Step(cfg.VisibilityDelay) // the world's own instance is visible from now on
	id := w.launch(t, awsemu.CapacityOnDemand)
	c := ec2.NewFromConfig(client(t, e))
	ctx := context.Background()
	byID := func() error {
		_, err := c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
		return err
	}
	listed := func() bool {
		out, err := c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
			{Name: awssdk.String("instance-state-name"), Values: []string{"running"}}}})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range out.Reservations {
			for _, in := range r.Instances {
				if awssdk.ToString(in.InstanceId) == id {
					return true
				}
			}
		}
		return false
	}
	terminate := func() error {
		_, err := c.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}})
		return err
	}

	clk.Step(cfg.VisibilityDelay - time.Second)
	if err := byID(); code(err) != "InvalidInstanceID.NotFound" {
		t.Errorf("describing it within the delay: %v, want InvalidInstanceID.NotFound", err)
	}
	if listed() {
		t.Error("a filtered DescribeInstances within the delay lists it")
	}
	if err := terminate(); code(err) != "InvalidInstanceID.NotFound" {
		t.Errorf("terminating it within the delay: %v, want InvalidInstanceID.NotFound", err)
	}
	if in := w.instance(t, id); in.State != awsemu.StateRunning {
		t.Fatalf("after a refused TerminateInstances the instance is %s, want running", in.State)
	}

	clk.Step(time.Second)
	if err := byID(); err != nil || !listed() {
		t.Errorf("after the delay: describing %v, listed %v; want it found", err, listed())
	}
	if err := terminate(); err != nil {
		t.Fatalf("terminating it after the delay: %v", err)
	}
	if in := w.instance(t, id); in.State != awsemu.StateShuttingDown {
		t.Errorf("after TerminateInstances the instance is %s, want shutting-down", in.State)
	}
}
