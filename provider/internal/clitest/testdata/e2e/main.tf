# Everything Stowage needs, deployed by its provider alone, on the bed: the
# IAM side, the interruption path and the controller, with the seed's pools.
terraform {
  required_providers {
    stowage = { source = "stowage-dev/stowage" }
  }
}

variable "aws_endpoint" { type = string }
variable "cluster_endpoint" { type = string }
variable "cluster_ca" { type = string } # base64 PEM
variable "oidc_provider_arn" { type = string }
variable "lambda_architecture" { type = string } # the machine's, for the runtime interface emulator

provider "stowage" {
  aws_region       = "us-east-1"
  aws_endpoint_url = var.aws_endpoint
}

resource "stowage_node_role" "nodes" {
  name = "StowageNodeRole-bed"
}

# The web pools, once: the pool resources are made from them, and the
# policy reads them. A reference from the policy to the pool resources would
# order the role's deletion before the pools', and the controller would lose
# its permissions while it drains their nodes. gpu-inference is left out of
# the policy, so that its launches show a denial.
locals {
  web_pools = {
    "web-spot"      = { weight = 100, capacity_type = "spot" }
    "web-on-demand" = { weight = 10, capacity_type = "on-demand" }
  }
  web_requirements = {
    for name, p in local.web_pools : name => [
      { key = "stowage.dev/instance-family", operator = "In", values = ["c6i", "m6i"] },
      { key = "stowage.dev/capacity-type", operator = "In", values = [p.capacity_type] },
      { key = "stowage.dev/instance-cpu", operator = "Lte", values = ["16"] },
    ]
  }
}

data "stowage_controller_policy" "bed" {
  cluster_name   = "bed"
  node_role_arns = [stowage_node_role.nodes.arn]
  node_pools     = [for name, reqs in local.web_requirements : { name = name, requirement = reqs }]
}

resource "stowage_controller_role" "controller" {
  name              = "StowageController-bed"
  policy_json       = data.stowage_controller_policy.bed.json
  oidc_provider_arn = var.oidc_provider_arn
}

resource "stowage_interruption_queue" "bed" {
  name = "bed-interruptions"
}

resource "stowage_interruption_handler" "bed" {
  name             = "bed-interruption"
  queue_arn        = stowage_interruption_queue.bed.arn
  cluster_name     = "bed"
  cluster_endpoint = var.cluster_endpoint
  cluster_ca_data  = var.cluster_ca
  architecture     = var.lambda_architecture
}

resource "stowage_controller" "this" {
  cluster_name        = "bed"
  cluster_endpoint    = var.cluster_endpoint
  cluster_ca_bundle   = var.cluster_ca
  role_arn            = stowage_controller_role.controller.arn
  destroy_node_claims = true
}

resource "stowage_node_class" "web" {
  name = "web"
  role = stowage_node_role.nodes.name
  ami_selector_term {
    alias = "al2023@latest"
  }
  subnet_selector_term {
    tags = { "stowage.dev/discovery" = "bed" }
  }
  security_group_selector_term {
    tags = { "stowage.dev/discovery" = "bed" }
  }
  depends_on = [stowage_controller.this]
}

resource "stowage_node_pool" "web" {
  for_each                 = local.web_pools
  name                     = each.key
  weight                   = each.value.weight
  labels                   = { tier = "web" }
  allow_destroy_with_nodes = true
  node_class_ref {
    name = stowage_node_class.web.name
  }
  dynamic "requirement" {
    for_each = local.web_requirements[each.key]
    content {
      key      = requirement.value.key
      operator = requirement.value.operator
      values   = requirement.value.values
    }
  }
  disruption {
    consolidation_policy = "WhenEmpty"
    consolidate_after    = "1h"
  }
  depends_on = [stowage_controller.this]
}

resource "stowage_node_pool" "gpu_inference" {
  name                     = "gpu-inference"
  weight                   = 50
  labels                   = { tier = "inference" }
  allow_destroy_with_nodes = true
  node_class_ref {
    name = stowage_node_class.web.name
  }
  taint {
    key    = "dedicated"
    value  = "gpu"
    effect = "NoSchedule"
  }
  requirement {
    key      = "node.kubernetes.io/instance-type"
    operator = "In"
    values   = ["g5.12xlarge"]
  }
  requirement {
    key      = "stowage.dev/capacity-type"
    operator = "In"
    values   = ["on-demand"]
  }
  depends_on = [stowage_controller.this]
}

output "controller_role_arn" {
  value = stowage_controller_role.controller.arn
}
