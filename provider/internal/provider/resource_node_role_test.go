package provider_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

// adminAWS is an administrator's SDK configuration for the emulator, to look
// behind the provider's back and to make drift.
func adminAWS() awssdk.Config {
	return awssdk.Config{Region: "us-east-1", BaseEndpoint: awssdk.String(access.emulator.URL), HTTPClient: access.emulator.Client(),
		Credentials: credentials.NewStaticCredentialsProvider(awsemu.DefaultAccessKeyID, awsemu.DefaultSecretAccessKey, "")}
}

func nodeRoleConfig(extra string) string {
	return awsProvider() + fmt.Sprintf(`
resource "stowage_node_role" "nodes" {
  name = "acc-nodes"
  %s
}
`, extra)
}

func TestAccNodeRole(t *testing.T) {
	const addr = "stowage_node_role.nodes"
	updated := `description = "Stowage nodes"
  tags        = { team = "platform", env = "acc" }
  policy_arns = ["arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy", "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly"]`
	ctx := context.Background()
	c := iam.NewFromConfig(adminAWS())
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		CheckDestroy:             checkRoleGone("acc-nodes", true),
		Steps: []resource.TestStep{
			{
				Config: nodeRoleConfig(`tags = { team = "platform" }`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("arn"), knownvalue.StringExact("arn:aws:iam::123456789012:role/acc-nodes")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("instance_profile_arn"), knownvalue.StringExact("arn:aws:iam::123456789012:instance-profile/acc-nodes")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("policy_arns"), knownvalue.SetSizeExact(4)),
				},
				Check: checkNodeRole(4),
			},
			{ResourceName: addr, ImportState: true, ImportStateVerify: true, ImportStateId: "acc-nodes"},
			{
				Config:           nodeRoleConfig(updated),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)}},
				Check:            checkNodeRole(2),
			},
			{Config: nodeRoleConfig(updated), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
			{
				// Drift: a policy detached and the role taken out of its profile by hand come back.
				PreConfig: func() {
					c.DetachRolePolicy(ctx, &iam.DetachRolePolicyInput{RoleName: awssdk.String("acc-nodes"), PolicyArn: awssdk.String("arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy")})
					c.RemoveRoleFromInstanceProfile(ctx, &iam.RemoveRoleFromInstanceProfileInput{InstanceProfileName: awssdk.String("acc-nodes"), RoleName: awssdk.String("acc-nodes")})
				},
				Config:           nodeRoleConfig(updated),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)}},
				Check:            checkNodeRole(2),
			},
			{ResourceName: addr, ImportState: true, ImportStateVerify: true, ImportStateId: "acc-nodes"},
		},
	})
}

// TestAccNodeRoleRefusesBadInput names each attribute at plan time.
func TestAccNodeRoleRefusesBadInput(t *testing.T) {
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		Steps: []resource.TestStep{
			{Config: awsProvider() + `resource "stowage_node_role" "x" { name = "has spaces" }`, PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)Invalid name.*is not an IAM name`)},
			{Config: awsProvider() + `resource "stowage_node_role" "x" {
  name = "ok"
  path = "nodes"
}`, PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)Invalid path.*starting and ending with /`)},
			{Config: awsProvider() + `resource "stowage_node_role" "x" {
  name        = "ok"
  policy_arns = ["AmazonEKSWorkerNodePolicy"]
}`, PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)Invalid policy_arns.*is not a managed policy ARN`)},
		},
	})
}

// checkNodeRole looks in the emulator: the role with that many policies, in its profile.
func checkNodeRole(policies int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		_, attached, ok := access.emu.RolePolicies("acc-nodes")
		if !ok || len(attached) != policies {
			return fmt.Errorf("role acc-nodes exists %v with policies %v, want %d", ok, attached, policies)
		}
		p, ok := access.emu.InstanceProfile("acc-nodes")
		if !ok || !slices.Equal(p.Roles, []string{"acc-nodes"}) {
			return fmt.Errorf("instance profile acc-nodes %v holds %v, want the role", ok, p.Roles)
		}
		return nil
	}
}

func checkRoleGone(name string, profile bool) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if slices.Contains(access.emu.Roles(), name) {
			return fmt.Errorf("role %s still exists", name)
		}
		if _, ok := access.emu.InstanceProfile(name); ok && profile {
			return fmt.Errorf("instance profile %s still exists", name)
		}
		return nil
	}
}
