package provider_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

const classAddr = "stowage_node_class.default"

func classConfig(name, extra string) string {
	return fmt.Sprintf(`
resource "stowage_node_class" "default" {
  name = %[1]q
  role = "StowageNodeRole-acc"
  ami_selector_term {
    alias = "al2023@latest"
  }
  subnet_selector_term {
    tags = { "stowage.dev/discovery" = "acc" }
  }
  security_group_selector_term {
    tags = { "stowage.dev/discovery" = "acc" }
  }
  %[2]s
}
`, name, extra)
}

// TestAccNodeClass creates a class, imports it, updates it in place (disks,
// kubelet, metadata options), proves no diff after apply, and destroys it.
func TestAccNodeClass(t *testing.T) {
	const name = "acc-default"
	update := `
  tags = { team = "platform" }
  user_data = "echo hello"
  detailed_monitoring = true
  block_device_mapping {
    device_name = "/dev/xvda"
    root_volume = true
    ebs {
      volume_size = "100Gi"
      volume_type = "gp3"
      iops        = 3000
      encrypted   = true
    }
  }
  kubelet {
    max_pods      = 110
    kube_reserved = { cpu = "100m", memory = "1Gi" }
    eviction_hard = { "memory.available" = "5%" }
    cluster_dns   = ["10.0.0.10"]
  }
  metadata_options {
    http_tokens = "required"
    http_put_response_hop_limit = 2
  }`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		CheckDestroy:             checkGone("nodeclasses", name),
		Steps: []resource.TestStep{
			{
				Config: classConfig(name, ""),
				Check: checkServer("nodeclasses", name, map[string]string{
					"spec.metadataOptions.httpTokens": "required", // the server's default
					"spec.role":                       "StowageNodeRole-acc",
				}),
			},
			{ResourceName: classAddr, ImportState: true, ImportStateVerify: true, ImportStateId: name},
			{
				Config: classConfig(name, update),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(classAddr, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(classAddr, tfjsonpath.New("metadata_options").AtMapKey("http_endpoint"), knownvalue.StringExact("enabled")),
				},
				Check: checkServer("nodeclasses", name, map[string]string{
					"spec.blockDeviceMappings[0].ebs.volumeSize":   "100Gi",
					"spec.metadataOptions.httpPutResponseHopLimit": "2",
					"spec.kubelet.maxPods":                         "110",
					"spec.detailedMonitoring":                      "true",
				}),
			},
			{ResourceName: classAddr, ImportState: true, ImportStateVerify: true, ImportStateId: name},
			{Config: classConfig(name, update), PlanOnly: true},
			{Config: classConfig(name, ""), Check: checkServer("nodeclasses", name, map[string]string{"spec.kubelet": "<absent>"})},
			{Config: classConfig(name, ""), PlanOnly: true},
		},
	})
}
