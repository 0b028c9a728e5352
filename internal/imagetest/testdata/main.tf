# The controller deployed by its provider alone, from the image var.image
# names (null: the provider's default), with IRSA and one pool.
terraform {
  required_providers {
    stowage = { source = "stowage-dev/stowage" }
  }
}

variable "aws_endpoint" { type = string }
variable "cluster_endpoint" { type = string }
variable "cluster_ca" { type = string } # base64 PEM
variable "oidc_provider_arn" { type = string }
variable "image" {
  type    = string
  default = null
}

provider "stowage" {
  aws_region       = "us-east-1"
  aws_endpoint_url = var.aws_endpoint
}

resource "stowage_node_role" "nodes" {
  name = "StowageNodeRole-bed"
}

locals {
  requirements = [
    { key = "stowage.dev/instance-family", operator = "In", values = ["c6i", "m6i"] },
    { key = "stowage.dev/capacity-type", operator = "In", values = ["on-demand"] },
  ]
}

data "stowage_controller_policy" "bed" {
  cluster_name   = "bed"
  node_role_arns = [stowage_node_role.nodes.arn]
  node_pools     = [{ name = "general", requirement = local.requirements }]
}

resource "stowage_controller_role" "controller" {
  name              = "StowageController-bed"
  policy_json       = data.stowage_controller_policy.bed.json
  oidc_provider_arn = var.oidc_provider_arn
}

resource "stowage_controller" "this" {
  cluster_name        = "bed"
  cluster_endpoint    = var.cluster_endpoint
  cluster_ca_bundle   = var.cluster_ca
  role_arn            = stowage_controller_role.controller.arn
  image               = var.image
  image_pull_policy   = "IfNotPresent"
  destroy_node_claims = true
  settings            = { "batch-idle-duration" = "1s" }
}

resource "stowage_node_class" "general" {
  name = "general"
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

resource "stowage_node_pool" "general" {
  name                     = "general"
  allow_destroy_with_nodes = true
  node_class_ref {
    name = stowage_node_class.general.name
  }
  dynamic "requirement" {
    for_each = local.requirements
    content {
      key      = requirement.value.key
      operator = requirement.value.operator
      values   = requirement.value.values
    }
  }
  depends_on = [stowage_controller.this]
}
