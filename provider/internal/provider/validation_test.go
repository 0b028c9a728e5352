package provider_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

const badPool = `
resource "stowage_node_pool" "bad" {
  name   = "Web_Pool"
  weight = 0
  labels = { "stowage.dev/team" = "web", "example.com/ok" = "-bad-" }
  limits = { cpu = "-1" }
  expire_after = "forever"
  termination_grace_period = "soon"
  node_class_ref {
    name  = "default"
    group = "example.com"
  }
  requirement {
    key      = "example.com/a"
    operator = "Equals"
    values   = ["x"]
  }
  requirement {
    key      = "example.com/b"
    operator = "In"
  }
  requirement {
    key      = "kubernetes.io/team"
    operator = "Exists"
  }
  requirement {
    key      = "stowage.dev/instance-cpu"
    operator = "Gt"
    values   = ["many"]
  }
  requirement {
    key      = "stowage.dev/capacity-type"
    operator = "In"
    values   = ["cheap"]
  }
  requirement {
    key        = "stowage.dev/instance-family"
    operator   = "In"
    values     = ["m7i"]
    min_values = 5
  }
  taint {
    key    = "example.com/dedicated"
    effect = "Sometimes"
  }
  disruption {
    consolidation_policy = "Sometimes"
    consolidate_after    = "5 minutes"
    budget {
      nodes = "110%"
    }
    budget {
      nodes    = "1"
      schedule = "every day"
      duration = "8h"
      reasons  = ["Bored"]
    }
    budget {
      schedule = "@daily"
    }
  }
}
`

const badClass = `
resource "stowage_node_class" "bad" {
  name = "bad"
  ami_selector_term {
    alias = "ubuntu@latest"
  }
  subnet_selector_term {
    id = "sub-123"
  }
  security_group_selector_term {
  }
  block_device_mapping {
    ebs {
      volume_type = "fast"
    }
  }
  metadata_options {
    http_tokens                 = "maybe"
    http_put_response_hop_limit = 100
  }
  kubelet {
    max_pods      = -1
    kube_reserved = { gpu = "1" }
    eviction_hard = { "memory.available" = "200%" }
  }
}
`

// inOrder builds a regexp that needs every fragment, in order, across lines.
func inOrder(fragments ...string) *regexp.Regexp {
	quoted := make([]string, len(fragments))
	for i, f := range fragments {
		quoted[i] = strings.ReplaceAll(regexp.QuoteMeta(f), " ", `\s+`)
	}
	return regexp.MustCompile(`(?s)` + strings.Join(quoted, ".*"))
}

// poolProblems are what badPool must fail with, in the order terraform prints
// them (by line): the attribute path and the start of the message.
var poolProblems = []string{
	"Invalid name", `"Web_Pool": a lowercase RFC 1123 subdomain`,
	"Invalid weight", "0: should be greater than or equal to 1",
	`Invalid labels["stowage.dev/team"]`, "stowage.dev/team is in a domain Kubernetes or Stowage owns",
	`Invalid labels["example.com/ok"]`, `"-bad-": a valid label must be`,
	`Invalid limits["cpu"]`, `"-1": must not be negative`,
	"Invalid expire_after", `"forever": must be a duration such as 30s, 10m or 720h, or Never`,
	"Invalid termination_grace_period", `"soon": terminationGracePeriod must be a duration`,
	"Invalid node_class_ref.group", `"example.com": group must be stowage.dev`,
	"Invalid requirement[0].operator", `Unsupported value: "Equals": supported values: "In"`,
	"Invalid requirement[1].values", "In needs at least one value; use Exists to allow any",
	"Invalid requirement[2].key", "kubernetes.io/team is in a domain Kubernetes, Stowage or Karpenter owns but is not a well-known label",
	"Invalid requirement[3].values[0]", `"many": Gt compares non-negative integers`,
	"Invalid requirement[4].values[0]", `"cheap": supported values: "reserved", "spot", "on-demand"`,
	"Invalid requirement[5].min_values", "minValues asks for more values than are listed",
	"Invalid taint[0].effect", `"Sometimes": supported values: "NoSchedule"`,
	"Invalid disruption.budget[2]", `"@daily": schedule and duration go together`,
	"Invalid disruption.consolidation_policy", `"Sometimes": supported values: "WhenEmpty"`,
	"Invalid disruption.consolidate_after", `"5 minutes": must be a duration`,
	"Invalid disruption.budget[0].nodes", `"110%": nodes must be a node count`,
	"Invalid disruption.budget[1].schedule", `"every day": schedule must be a five-field cron expression`,
	"Invalid disruption.budget[1].reasons[0]", `"Bored": supported values: "Empty"`,
}

var classProblems = []string{
	"Invalid security_group_selector_term[0]", "set tags, id or name",
	"Invalid role", "set exactly one of role and instanceProfile",
	"Invalid ami_selector_term[0].alias", `"ubuntu@latest": want family@version with family al2023 or bottlerocket`,
	"Invalid subnet_selector_term[0].id", `"sub-123": should match '^subnet-[0-9a-z]+$'`,
	"Invalid block_device_mapping[0].ebs.volume_type", `"fast": supported values: "standard"`,
	"Invalid metadata_options.http_tokens", `"maybe": supported values: "required", "optional"`,
	"Invalid metadata_options.http_put_response_hop_limit", "100: must be between 1 and 64",
	"Invalid kubelet.max_pods", "-1: must not be negative; leave it unset to use the ENI limit",
	`Invalid kubelet.kube_reserved["gpu"]`, `"gpu": supported values: "cpu", "memory"`,
	`Invalid kubelet.eviction_hard["memory.available"]`, `"200%": want a quantity such as 100Mi or a percentage`,
}

const missingBlocks = `
resource "stowage_node_class" "empty" {
  name = "empty"
  role = "r"
}
resource "stowage_node_pool" "no_class" {
  name = "no-class"
}
`

// TestValidationAtPlanTime runs every validator on bad configurations, grouped
// into few plan-only steps: each diagnostic names the attribute and the fix,
// and no cluster is contacted for it.
func TestValidationAtPlanTime(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providers,
		Steps: []resource.TestStep{
			{Config: badPool, PlanOnly: true, ExpectError: inOrder(poolProblems...)},
			{Config: badClass, PlanOnly: true, ExpectError: inOrder(classProblems...)},
			// The schema requires them (NewServer): Terraform itself refuses the configuration.
			{Config: missingBlocks, PlanOnly: true, ExpectError: inOrder(
				"Insufficient ami_selector_term blocks", `At least 1 "ami_selector_term" blocks are required`,
				"Missing node_class_ref block", `A block of type "node_class_ref" is required here`)},
		},
	})
}
