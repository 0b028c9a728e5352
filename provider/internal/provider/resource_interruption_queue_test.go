package provider_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

func queueConfig(extra string) string {
	return awsProvider() + fmt.Sprintf(`
resource "stowage_interruption_queue" "q" {
  name = "acc-interruptions"
  %s
}
`, extra)
}

// ruleNames are the interruption rules a queue named acc-interruptions has.
var ruleNames = []string{"spot-interruption", "rebalance-recommendation", "scheduled-change", "state-change", "capacity-reservation-interruption", "capacity-block-expiration"}

// TestAccInterruptionQueue creates the queue, its dead-letter queue, policies
// and rules; checks that a spot warning EC2 raises reaches it while an IAM
// principal may not send; imports, updates, undoes drift, destroys.
func TestAccInterruptionQueue(t *testing.T) {
	const addr = "stowage_interruption_queue.q"
	ctx := context.Background()
	q, events := sqs.NewFromConfig(adminAWS()), eventbridge.NewFromConfig(adminAWS())
	updated := `message_retention_seconds = 600
  max_receive_count         = 3
  tags                      = { team = "platform" }`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		CheckDestroy: func(*terraform.State) error {
			if left := access.emu.Queues(); len(left) > 0 {
				return fmt.Errorf("queues left: %v", left)
			}
			for _, r := range ruleNames {
				if _, err := events.DescribeRule(ctx, &eventbridge.DescribeRuleInput{Name: awssdk.String("acc-interruptions-" + r)}); err == nil {
					return fmt.Errorf("rule %s left", r)
				}
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: queueConfig(""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("arn"), knownvalue.StringExact("arn:aws:sqs:us-east-1:123456789012:acc-interruptions")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("rules").AtMapKey("spot-interruption"),
						knownvalue.StringExact("arn:aws:events:us-east-1:123456789012:rule/acc-interruptions-spot-interruption")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("rules"), knownvalue.MapSizeExact(len(ruleNames))),
				},
				Check: resource.ComposeTestCheckFunc(checkQueue(t, "300", "5"), checkOnlyEventBridgeSends(t)),
			},
			{ResourceName: addr, ImportState: true, ImportStateVerify: true, ImportStateId: "acc-interruptions"},
			{
				Config:           queueConfig(updated),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)}},
				Check:            checkQueue(t, "600", "3"),
			},
			{
				// Drift: a rule's target removed, the retention and the dead-letter queue's policy changed by hand.
				PreConfig: func() {
					events.RemoveTargets(ctx, &eventbridge.RemoveTargetsInput{Rule: awssdk.String("acc-interruptions-spot-interruption"),
						Ids: []string{"stowage-interruption-queue"}})
					url, _ := q.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: awssdk.String("acc-interruptions")})
					q.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: url.QueueUrl, Attributes: map[string]string{"MessageRetentionPeriod": "86400"}})
					dlq, _ := q.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: awssdk.String("acc-interruptions-dlq")})
					q.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: dlq.QueueUrl, Attributes: map[string]string{"Policy": ""}})
				},
				Config:           queueConfig(updated),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)}},
				Check:            resource.ComposeTestCheckFunc(checkQueue(t, "600", "3"), checkOnlyEventBridgeSends(t)),
			},
			{Config: queueConfig(updated), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
			{ResourceName: addr, ImportState: true, ImportStateVerify: true, ImportStateId: "acc-interruptions"},
		},
	})
}

func TestAccInterruptionQueueRefusesBadInput(t *testing.T) {
	bad := func(extra, want string) resource.TestStep {
		return resource.TestStep{Config: queueConfig(extra), PlanOnly: true, ExpectError: regexp.MustCompile(want)}
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		Steps: []resource.TestStep{
			bad(`message_retention_seconds = 30`, `(?s)Invalid message_retention_seconds.*from 60 to 1209600`),
			bad(`max_receive_count = 0`, `(?s)Invalid max_receive_count.*from 1 to 1000`),
			bad(`visibility_timeout_seconds = 50000`, `(?s)Invalid visibility_timeout_seconds`),
			bad(`rule_name_prefix = "`+strings.Repeat("p", 40)+`"`, `(?s)Invalid rule_name_prefix.*EventBridge's 64`),
			{Config: awsProvider() + `resource "stowage_interruption_queue" "q" { name = "has.dots" }`, PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)Invalid name.*not a queue name`)},
		},
	})
}

// checkQueue checks both queues' attributes and policies and every rule.
func checkQueue(t *testing.T, retention, maxReceives string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		attrs, ok := access.emu.QueueAttributes("acc-interruptions")
		dlq, dlqOK := access.emu.QueueAttributes("acc-interruptions-dlq")
		if !ok || !dlqOK {
			return fmt.Errorf("queue %v, dead-letter queue %v", ok, dlqOK)
		}
		want := map[string]string{"MessageRetentionPeriod": retention, "SqsManagedSseEnabled": "true",
			"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:123456789012:acc-interruptions-dlq","maxReceiveCount":` + maxReceives + `}`}
		for k, v := range want {
			if attrs[k] != v {
				return fmt.Errorf("queue attribute %s = %q, want %q", k, attrs[k], v)
			}
		}
		for _, doc := range []string{attrs["Policy"], dlq["Policy"]} {
			if !strings.Contains(doc, `"aws:SecureTransport":"false"`) || !strings.Contains(doc, `"Effect":"Deny"`) {
				return fmt.Errorf("policy %s does not deny plain HTTP", doc)
			}
		}
		events := eventbridge.NewFromConfig(adminAWS())
		for _, r := range ruleNames {
			targets, err := events.ListTargetsByRule(context.Background(), &eventbridge.ListTargetsByRuleInput{Rule: awssdk.String("acc-interruptions-" + r)})
			if err != nil || len(targets.Targets) != 1 || awssdk.ToString(targets.Targets[0].Arn) != "arn:aws:sqs:us-east-1:123456789012:acc-interruptions" {
				return fmt.Errorf("rule %s targets %v (%v), want the queue", r, targets, err)
			}
		}
		return nil
	}
}

// checkOnlyEventBridgeSends has EC2 warn of a spot interruption, which
// EventBridge's rule must route to the queue, and has an administrator
// send, which the policy refuses.
func checkOnlyEventBridgeSends(t *testing.T) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx := context.Background()
		before := len(access.emu.QueueMessages("acc-interruptions"))
		id, err := spotInstance(access.emu)
		if err != nil {
			return err
		}
		if err := access.emu.Interrupt(id); err != nil {
			return err
		}
		if got := access.emu.QueueMessages("acc-interruptions"); len(got) != before+1 || !strings.Contains(got[len(got)-1], id) {
			return fmt.Errorf("after a spot warning the queue holds %d messages, want %d with the warning", len(got), before+1)
		}
		q := sqs.NewFromConfig(adminAWS())
		url, _ := q.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: awssdk.String("acc-interruptions")})
		_, err = q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: url.QueueUrl, MessageBody: awssdk.String("forged warning")})
		if !strings.Contains(fmt.Sprint(err), "AccessDenied") {
			return fmt.Errorf("an administrator sending: %v, want AccessDenied from the queue's policy", err)
		}
		return nil
	}
}

// spotInstance launches a spot instance into the emulator, in process, for
// EC2 to raise events about.
func spotInstance(e *awsemu.Emulator) (string, error) {
	subnets, _ := e.SeedDefaultNetwork("acc")
	image := e.AddImage(awsemu.Image{Name: "acc", Architecture: "x86_64"})
	lt := e.AddLaunchTemplate(awsemu.LaunchTemplate{Name: "acc", ImageID: image})
	res, err := e.CreateFleet(awsemu.FleetRequest{CapacityType: awsemu.CapacitySpot, TotalTargetCapacity: 1,
		Overrides: []awsemu.FleetOverride{{LaunchTemplateID: lt, InstanceType: "m6i.large", SubnetID: subnets[0]}}})
	if err != nil || len(res.Instances) != 1 {
		return "", fmt.Errorf("launching a spot instance: %+v, %v", res, err)
	}
	return res.Instances[0].InstanceIDs[0], nil
}

// TestAccInterruptionQueueTakesOverWhatExists: queues and a rule left by an
// apply that failed part-way (or made by hand) are taken over, their
// settings converged, rather than refused.
func TestAccInterruptionQueueTakesOverWhatExists(t *testing.T) {
	ctx := context.Background()
	q, events := sqs.NewFromConfig(adminAWS()), eventbridge.NewFromConfig(adminAWS())
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		CheckDestroy: func(*terraform.State) error {
			if left := access.emu.Queues(); len(left) > 0 {
				return fmt.Errorf("queues left: %v", left)
			}
			return nil
		},
		Steps: []resource.TestStep{{
			PreConfig: func() {
				for _, name := range []string{"acc-interruptions-dlq", "acc-interruptions"} {
					if _, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: awssdk.String(name),
						Attributes: map[string]string{"MessageRetentionPeriod": "86400"}}); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := events.PutRule(ctx, &eventbridge.PutRuleInput{Name: awssdk.String("acc-interruptions-spot-interruption"),
					EventPattern: awssdk.String(`{"source":["aws.ec2"]}`)}); err != nil {
					t.Fatal(err)
				}
			},
			Config: queueConfig(""),
			Check:  resource.ComposeTestCheckFunc(checkQueue(t, "300", "5"), checkOnlyEventBridgeSends(t)),
		}},
	})
}
