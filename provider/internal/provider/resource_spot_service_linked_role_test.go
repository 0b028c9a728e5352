package provider_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// TestAccSpotServiceLinkedRole creates the spot service-linked role in the
// emulator's account, which starts without it (as one that never ran spot),
// as the operator's IAM user; applying again changes nothing, and a destroy
// leaves the role.
func TestAccSpotServiceLinkedRole(t *testing.T) {
	const addr = "stowage_spot_service_linked_role.this"
	config := awsProvider() + `resource "stowage_spot_service_linked_role" "this" {}`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		CheckDestroy: func(*terraform.State) error {
			if !access.emu.SpotServiceLinkedRoleExists() {
				return fmt.Errorf("the destroy deleted the spot role, which the account's other spot users rely on")
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue(addr, tfjsonpath.New("arn"),
					knownvalue.StringExact("arn:aws:iam::123456789012:role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot"))},
				Check: func(*terraform.State) error {
					if !access.emu.SpotServiceLinkedRoleExists() {
						return fmt.Errorf("the account has no spot role after the apply")
					}
					return nil
				},
			},
			{Config: config, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
		},
	})
}
