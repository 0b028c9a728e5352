package provider_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

const oidcARN = "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/ACCEPTANCE"

// seedPolicyConfig is the seed's pools with a node role and the policy generated for them.
func seedPolicyConfig(t *testing.T, extra string) string {
	t.Helper()
	pools, err := os.ReadFile("testdata/plan/pools.tf")
	if err != nil {
		t.Fatal(err)
	}
	return awsProvider() + string(pools) + `
resource "stowage_node_role" "nodes" {
  name = "StowageNodeRole-prod"
}

locals {
  pools = [stowage_node_pool.web_spot, stowage_node_pool.web_on_demand, stowage_node_pool.gpu_inference]
}

data "stowage_controller_policy" "prod" {
  cluster_name   = "prod"
  node_role_arns = [stowage_node_role.nodes.arn]
  node_pools     = local.pools
` + extra + `
}
`
}

func controllerRoleConfig(t *testing.T, role, policyExtra string) string {
	return seedPolicyConfig(t, policyExtra) + fmt.Sprintf(`
resource "stowage_controller_role" "ctrl" {
  name        = "acc-controller"
  policy_json = data.stowage_controller_policy.prod.json
  %s
}
`, role)
}

// TestAccControllerPolicyAndRoleWithIRSA generates the policy for the seed's
// pools, puts it on a role that IRSA trusts for the controller's service
// account, and checks the role, its update, its drift and its import.
func TestAccControllerPolicyAndRoleWithIRSA(t *testing.T) {
	const addr = "stowage_controller_role.ctrl"
	irsa := fmt.Sprintf("oidc_provider_arn = %q", oidcARN)
	ctx := context.Background()
	c := iam.NewFromConfig(adminAWS())
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		CheckDestroy:             checkRoleGone("acc-controller", false),
		Steps: []resource.TestStep{
			{
				Config: controllerRoleConfig(t, irsa, ""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.stowage_controller_policy.prod", tfjsonpath.New("launchable_instance_types"), knownvalue.ListExact(
						strings2known("c6i.2xlarge", "c6i.4xlarge", "c6i.large", "c6i.xlarge", "g5.12xlarge", "g5.24xlarge", "g6.12xlarge",
							"m6i.2xlarge", "m6i.4xlarge", "m6i.large", "m6i.xlarge"))),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("pod_identity_association_id"), knownvalue.StringExact("")),
				},
				Check: resource.ComposeTestCheckFunc(checkInlinePolicy(t), checkTrust("acc-controller",
					`"oidc.eks.us-east-1.amazonaws.com/id/ACCEPTANCE:sub":"system:serviceaccount:stowage:stowage"`)),
			},
			{ResourceName: addr, ImportState: true, ImportStateVerify: true, ImportStateId: "acc-controller"},
			{
				Config:           controllerRoleConfig(t, irsa+"\n  namespace = \"karpenter\"\n  tags = { team = \"platform\" }", `instance_types = ["t3.medium"]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)}},
				Check: resource.ComposeTestCheckFunc(checkInlinePolicy(t), checkTrust("acc-controller", `"system:serviceaccount:karpenter:stowage"`),
					func(*terraform.State) error {
						inline, _, _ := access.emu.RolePolicies("acc-controller")
						if !strings.Contains(inline["StowageController"], `"t3.medium"`) {
							return fmt.Errorf("the policy does not allow the added type: %s", inline["StowageController"])
						}
						return nil
					}),
			},
			{
				// Drift: the policy widened and the trust opened by hand are put back.
				PreConfig: func() {
					c.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: awssdk.String("acc-controller"), PolicyName: awssdk.String("StowageController"),
						PolicyDocument: awssdk.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`)})
					c.UpdateAssumeRolePolicy(ctx, &iam.UpdateAssumeRolePolicyInput{RoleName: awssdk.String("acc-controller"), PolicyDocument: awssdk.String(ec2TrustDoc)})
				},
				Config:           controllerRoleConfig(t, irsa+"\n  namespace = \"karpenter\"\n  tags = { team = \"platform\" }", `instance_types = ["t3.medium"]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)}},
				Check:            resource.ComposeTestCheckFunc(checkInlinePolicy(t), checkTrust("acc-controller", `"system:serviceaccount:karpenter:stowage"`)),
			},
			{
				Config:           controllerRoleConfig(t, irsa+"\n  namespace = \"karpenter\"\n  tags = { team = \"platform\" }", `instance_types = ["t3.medium"]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}

const ec2TrustDoc = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`

func TestAccControllerRoleWithPodIdentity(t *testing.T) {
	const addr = "stowage_controller_role.ctrl"
	pod := fmt.Sprintf("pod_identity_cluster_name = %q", eksCluster)
	ctx := context.Background()
	e := eks.NewFromConfig(adminAWS())
	associations := func(want int) resource.TestCheckFunc {
		return func(*terraform.State) error {
			got := access.emu.PodIdentityAssociations()
			if len(got) != want || want == 1 && (got[0].RoleARN != "arn:aws:iam::123456789012:role/acc-controller" || got[0].Namespace != "stowage") {
				return fmt.Errorf("associations %+v, want %d for acc-controller in stowage", got, want)
			}
			return nil
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		CheckDestroy:             func(s *terraform.State) error { return associations(0)(s) },
		Steps: []resource.TestStep{
			{
				Config: controllerRoleConfig(t, pod, ""),
				Check: resource.ComposeTestCheckFunc(associations(1), checkTrust("acc-controller",
					`"aws:SourceArn":"arn:aws:eks:us-east-1:123456789012:cluster/`+eksCluster+`"`)),
			},
			{ResourceName: addr, ImportState: true, ImportStateVerify: true, ImportStateId: "acc-controller," + eksCluster},
			{
				PreConfig: func() { // deleted by hand: made again
					for _, a := range access.emu.PodIdentityAssociations() {
						e.DeletePodIdentityAssociation(ctx, &eks.DeletePodIdentityAssociationInput{ClusterName: awssdk.String(eksCluster), AssociationId: awssdk.String(a.ID)})
					}
				},
				Config:           controllerRoleConfig(t, pod, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)}},
				Check:            associations(1),
			},
			{Config: controllerRoleConfig(t, pod, ""), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
			{
				// From Pod Identity to IRSA: the association goes, the trust changes in place.
				Config:           controllerRoleConfig(t, fmt.Sprintf("oidc_provider_arn = %q", oidcARN), ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)}},
				Check:            resource.ComposeTestCheckFunc(associations(0), checkTrust("acc-controller", `"Federated"`)),
			},
		},
	})
}

func TestAccControllerPolicyAndRoleRefuseBadInput(t *testing.T) {
	role := func(body string) string {
		return awsProvider() + `resource "stowage_controller_role" "x" {
  name        = "x"
  policy_json = jsonencode({ Version = "2012-10-17", Statement = [] })
  ` + body + `
}`
	}
	policy := func(body string) string {
		return awsProvider() + `data "stowage_controller_policy" "x" {
  cluster_name = "prod"
  ` + body + `
}`
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		Steps: []resource.TestStep{
			{Config: role(""), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)Choose IRSA or Pod Identity.*exactly one of`)},
			{Config: role(fmt.Sprintf("oidc_provider_arn = %q\n pod_identity_cluster_name = \"c\"", oidcARN)), PlanOnly: true,
				ExpectError: regexp.MustCompile(`exactly one of oidc_provider_arn`)},
			{Config: role(`oidc_provider_arn = "oidc.eks.us-east-1.amazonaws.com/id/X"`), PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)Invalid oidc_provider_arn.*is not an IAM OIDC provider ARN`)},
			{Config: role(fmt.Sprintf("oidc_provider_arn = %q\n max_session_duration = 60", oidcARN)), PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)Invalid max_session_duration.*3600 to 43200`)},
			{Config: awsProvider() + fmt.Sprintf(`resource "stowage_controller_role" "x" {
  name              = "x"
  policy_json       = "Allow everything"
  oidc_provider_arn = %q
}`, oidcARN), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)Invalid policy_json.*stowage_controller_policy`)},
			// A pool on reservations only allows its types too (the catalogue has no reservations to price).
			{Config: policy(`node_role_arns = ["arn:aws:iam::123456789012:role/n"]
  node_pools     = [{ name = "gpu-training", requirement = [
    { key = "node.kubernetes.io/instance-type", operator = "In", values = ["p5.48xlarge"] },
    { key = "stowage.dev/capacity-type", operator = "In", values = ["reserved"] },
  ] }]
  lifecycle {
    postcondition {
      condition     = self.launchable_instance_types == tolist(["p5.48xlarge"])
      error_message = "launchable: ${jsonencode(self.launchable_instance_types)}"
    }
  }`), PlanOnly: true},
			{Config: policy(`node_role_arns = []`), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)Missing node_role_arns`)},
			{Config: policy(`node_role_arns = ["arn:aws:iam::123456789012:role/*"]`), PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)Invalid node_role_arns\[0\].*no wildcards`)},
			{Config: policy(`node_role_arns = ["arn:aws:iam::123456789012:role/n"]
  account_id     = "210987654321"`), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)node_role_arns\[0\].*is not a role of account 210987654321`)},
			{Config: policy(`node_role_arns = ["arn:aws:iam::123456789012:role/n"]
  region         = "Virginia"`), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)Invalid region.*is not a region`)},
			{Config: policy(`node_role_arns = ["arn:aws:iam::123456789012:role/n"]
  instance_types = ["large"]`), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)Invalid instance_types\[0\].*is not an instance type`)},
		},
	})
}

func strings2known(values ...string) []knownvalue.Check {
	out := make([]knownvalue.Check, len(values))
	for i, v := range values {
		out[i] = knownvalue.StringExact(v)
	}
	return out
}

// checkInlinePolicy compares the role's inline policy with the generated one
// the data source output holds, and logs it.
func checkInlinePolicy(t *testing.T) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		ds, ok := s.RootModule().Resources["data.stowage_controller_policy.prod"]
		if !ok {
			return fmt.Errorf("no stowage_controller_policy in the state")
		}
		generated := ds.Primary.Attributes["json"]
		inline, _, _ := access.emu.RolePolicies("acc-controller")
		var want, got any
		if err := json.Unmarshal([]byte(generated), &want); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(inline["StowageController"]), &got); err != nil {
			return fmt.Errorf("the role's policy %q: %w", inline["StowageController"], err)
		}
		if fmt.Sprint(want) != fmt.Sprint(got) {
			return fmt.Errorf("the role holds %s, want the generated %s", inline["StowageController"], generated)
		}
		indented, _ := json.MarshalIndent(want, "", "  ")
		t.Logf("the controller's policy for the seed's pools:\n%s", indented)
		return nil
	}
}

func checkTrust(role, want string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		out, err := iam.NewFromConfig(adminAWS()).GetRole(context.Background(), &iam.GetRoleInput{RoleName: awssdk.String(role)})
		if err != nil {
			return err
		}
		doc := awssdk.ToString(out.Role.AssumeRolePolicyDocument)
		if decoded, err := urlUnescape(doc); err == nil {
			doc = decoded
		}
		if !strings.Contains(doc, want) {
			return fmt.Errorf("trust policy %s does not contain %s", doc, want)
		}
		return nil
	}
}

func urlUnescape(s string) (string, error) { return url.QueryUnescape(s) }
