# The IAM the chart's controller runs as, from the provider's data sources,
# as docs/guides/install.md makes it.
terraform {
  required_providers {
    stowage = { source = "stowage-dev/stowage" }
  }
}

provider "stowage" {}

variable "oidc_provider_arn" { type = string }

resource "stowage_node_role" "nodes" {
  name = "StowageNodeRole-bed"
}

data "stowage_controller_policy" "this" {
  cluster_name   = "bed"
  node_role_arns = [stowage_node_role.nodes.arn]
}

resource "stowage_controller_role" "this" {
  name              = "StowageController-bed"
  policy_json       = data.stowage_controller_policy.this.json
  oidc_provider_arn = var.oidc_provider_arn
}

output "controller_role_arn" { value = stowage_controller_role.this.arn }
output "node_role_name" { value = stowage_node_role.nodes.name }
