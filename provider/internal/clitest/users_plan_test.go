package clitest

import (
	"fmt"
	"strings"
	"testing"
)

// whyConfig is the docs' pair used together: a spot pool with min_values 2
// on the zone (and, with fallback, an on-demand pool of lower weight behind
// it) and a stowage_plan of 48 web pods spread over the zones; assertion is
// a check block or a precondition of an output.
func whyConfig(fallback bool, assertion string) string {
	onDemand, pools := "", "[stowage_node_pool.spot]"
	if fallback {
		onDemand = `
resource "stowage_node_pool" "on_demand" {
  name   = "why-on-demand"
  weight = 10
  labels = { tier = "web" }
  node_class_ref {
    name = stowage_node_class.web.name
  }
  requirement {
    key      = "stowage.dev/instance-family"
    operator = "In"
    values   = ["c6i", "m6i"]
  }
  requirement {
    key      = "stowage.dev/capacity-type"
    operator = "In"
    values   = ["on-demand"]
  }
}`
		pools = "[stowage_node_pool.spot, stowage_node_pool.on_demand]"
	}
	precondition, check := "", ""
	switch assertion {
	case "precondition":
		precondition = `
  precondition {
    condition     = length(data.stowage_plan.peak.unschedulable) == 0
    error_message = "unschedulable at the peak"
  }`
	case "check":
		check = `
check "peak_fits" {
  assert {
    condition     = length(data.stowage_plan.peak.unschedulable) == 0
    error_message = "unschedulable at the peak"
  }
}`
	}
	return classResource("web", "why-class") + fmt.Sprintf(`
resource "stowage_node_pool" "spot" {
  name   = "why-spot"
  weight = 100
  labels = { tier = "web" }
  node_class_ref {
    name = stowage_node_class.web.name
  }
  requirement {
    key      = "stowage.dev/instance-family"
    operator = "In"
    values   = ["c6i", "m6i"]
  }
  requirement {
    key      = "stowage.dev/capacity-type"
    operator = "In"
    values   = ["spot"]
  }
  requirement {
    key        = "topology.kubernetes.io/zone"
    operator   = "In"
    values     = ["us-east-1a", "us-east-1b", "us-east-1c"]
    min_values = 2
  }
}
%s

locals {
  pools   = %s
  classes = [stowage_node_class.web]
}

data "stowage_plan" "peak" {
  node_pools   = local.pools
  node_classes = local.classes
  pod {
    name          = "storefront"
    replicas      = 48
    requests      = { cpu = "1", memory = "2Gi" }
    node_selector = { tier = "web" }
    topology_spread {
      topology_key = "topology.kubernetes.io/zone"
    }
  }
}
%s

output "unschedulable_reason" {
  value = length(data.stowage_plan.peak.unschedulable) > 0 ? data.stowage_plan.peak.unschedulable[0].reason : ""
}

output "cost_per_hour" {
  value = data.stowage_plan.peak.cost_per_hour%s
}
`, onDemand, pools, check, precondition)
}

// TestThePlanSaysWhyPodsGoWhereTheyGo: the zone spread pins each new node to
// one zone, which min_values 2 on the zone cannot allow: the unschedulable
// reason names the min_values; a check block only warns, an output's
// precondition fails the plan; and with an on-demand pool behind, the plan says, as a
// warning, that the pods fell back to it and why.
func TestThePlanSaysWhyPodsGoWhereTheyGo(t *testing.T) {
	e := newCLIEnv(t)
	e.installCRDs(t)
	dir := e.userDir(t, whyConfig(false, "check"))
	plan := e.MustRun(t, dir, "plan", "-input=false")
	t.Logf("terraform plan with a check block, every pod unschedulable:\n%s", plan)
	expectSays(t, plan, "Warning: Check block assertion failed", "unschedulable at the peak",
		`minValues 2 of topology.kubernetes.io/zone`, "puts each new node in one topology.kubernetes.io/zone")
	if strings.Contains(plan, `reason = "nodepool why-spot: cannot satisfy topology spread`) {
		t.Errorf("the reason names the spread:\n%s", plan)
	}

	e.write(t, dir, whyConfig(false, "precondition"))
	out := e.expectFail(t, dir, []string{"Error: Module output value precondition failed", "unschedulable at the peak"}, "plan", "-input=false")
	t.Logf("terraform plan with an output's precondition:\n%s", out)

	e.write(t, dir, whyConfig(true, "precondition"))
	plan = e.MustRun(t, dir, "plan", "-input=false")
	t.Logf("terraform plan with an on-demand fallback pool:\n%s", plan)
	expectSays(t, plan, "Warning: 48 pods fell back to pool why-on-demand",
		"default/storefront (48 pods) not on why-spot (weight 100): minValues 2 of topology.kubernetes.io/zone")
}
