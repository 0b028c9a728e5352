package provider_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/provider/internal/kube"
)

const poolAddr = "stowage_node_pool.web"

func poolConfig(name, labels, extra string) string {
	return fmt.Sprintf(`
resource "stowage_node_pool" "web" {
  name   = %[1]q
  weight = 50
  labels = { %[2]s }

  node_class_ref {
    name = "default"
  }

  requirement {
    key      = "stowage.dev/capacity-type"
    operator = "In"
    values   = ["spot", "on-demand"]
  }
  requirement {
    key        = "stowage.dev/instance-family"
    operator   = "In"
    values     = ["m7i", "m6i", "c7i"]
    min_values = 2
  }
  %[3]s
}
`, name, labels, extra)
}

// TestAccNodePool creates a pool, imports it, updates it in place, proves
// that a plan after apply is empty (server defaults included), and destroys it.
func TestAccNodePool(t *testing.T) {
	const name = "acc-web"
	defaultClass(t)
	update := `
  taint {
    key    = "example.com/dedicated"
    value  = "web"
    effect = "NoSchedule"
  }
  limits = { cpu = "1000", memory = "4000Gi" }
  min_pod_priority = -100
  expire_after = "336h"
  termination_grace_period = "48h"
  disruption {
    consolidation_policy = "WhenEmpty"
    consolidate_after    = "5m"
    budget {
      nodes = "20%"
    }
    budget {
      nodes    = "0"
      schedule = "0 9 * * 1-5"
      duration = "8h"
      reasons  = ["Underutilized", "Drifted"]
    }
  }`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		CheckDestroy:             checkGone("nodepools", name),
		Steps: []resource.TestStep{
			{
				Config: poolConfig(name, `"example.com/team" = "web"`, ""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(poolAddr, tfjsonpath.New("id"), knownvalue.StringExact(name)),
					statecheck.ExpectKnownValue(poolAddr, tfjsonpath.New("expire_after"), knownvalue.StringExact("720h")),
					statecheck.ExpectKnownValue(poolAddr, tfjsonpath.New("node_class_ref").AtMapKey("group"), knownvalue.StringExact("stowage.dev")),
				},
				Check: checkServer("nodepools", name, map[string]string{
					"spec.template.spec.requirements[1].minValues": "2",
					"spec.disruption.budgets[0].nodes":             "10%", // the server's default, not in the configuration
					"metadata.managedFields[0].manager":            kube.FieldManager,
				}),
			},
			{ResourceName: poolAddr, ImportState: true, ImportStateVerify: true, ImportStateId: name},
			{
				Config: poolConfig(name, `"example.com/team" = "web", "example.com/tier" = "frontend"`, update),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(poolAddr, plancheck.ResourceActionUpdate),
				}},
				Check: checkServer("nodepools", name, map[string]string{
					"spec.disruption.budgets[1].schedule":   "0 9 * * 1-5",
					"spec.limits.cpu":                       "1000",
					"spec.minPodPriority":                   "-100",
					"spec.template.spec.taints[0].effect":   "NoSchedule",
					"spec.template.metadata.labels":         "map[example.com/team:web example.com/tier:frontend]",
					"spec.template.spec.expireAfter":        "336h",
					"spec.disruption.consolidationPolicy":   "WhenEmpty",
					"spec.template.spec.nodeClassRef.group": "stowage.dev",
				}),
			},
			{ResourceName: poolAddr, ImportState: true, ImportStateVerify: true, ImportStateId: name},
			{
				Config: poolConfig(name, `"example.com/team" = "web", "example.com/tier" = "frontend"`, update),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
			},
			{
				// Removing a block removes its fields: the server's defaults come back, and nothing diffs.
				Config: poolConfig(name, `"example.com/team" = "web"`, ""),
				Check: checkServer("nodepools", name, map[string]string{
					"spec.disruption.budgets[0].nodes":    "10%",
					"spec.disruption.consolidationPolicy": "WhenEmptyOrUnderutilized",
					"spec.template.spec.taints":           "<absent>",
				}),
			},
			{Config: poolConfig(name, `"example.com/team" = "web"`, ""), PlanOnly: true},
		},
	})
}

// checkServer compares fields of the object the API server holds with want
// ("<absent>" for a field that must not be there).
func checkServer(plural, name string, want map[string]string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		obj, err := bed.dyn.Resource(kube.Resource(plural)).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for p, w := range want {
			got, ok := lookup(obj.Object, p)
			if w == "<absent>" {
				if ok {
					return fmt.Errorf("%s = %v, want it absent", p, got)
				}
				continue
			}
			if !ok || fmt.Sprint(got) != w {
				return fmt.Errorf("%s = %v (present %v), want %s", p, got, ok, w)
			}
		}
		return nil
	}
}

func checkGone(plural, name string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		_, err := bed.dyn.Resource(kube.Resource(plural)).Get(context.Background(), name, metav1.GetOptions{})
		if err == nil {
			return fmt.Errorf("%s %s still exists after destroy", plural, name)
		}
		return nil
	}
}
