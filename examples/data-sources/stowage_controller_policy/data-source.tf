# The pools' requirements, once: the pool resources are made from them
# (for_each over local.launching_pools, each requirement a dynamic block),
# and the policy reads them. The policy is generated during `terraform plan`,
# and the controller may launch only for these pools, only the instance types
# they allow.
locals {
  launching_pools = {
    "web-spot" = [
      { key = "stowage.dev/instance-family", operator = "In", values = ["c6i", "m6i", "c7i", "m7i"] },
      { key = "stowage.dev/capacity-type", operator = "In", values = ["spot"] },
    ]
    "gpu-inference" = [
      { key = "node.kubernetes.io/instance-type", operator = "In", values = ["g5.12xlarge", "g5.24xlarge", "g6.12xlarge"] },
      { key = "stowage.dev/capacity-type", operator = "In", values = ["on-demand"] },
    ]
  }
}

data "stowage_controller_policy" "prod" {
  cluster_name   = "prod"
  node_role_arns = [stowage_node_role.nodes.arn]
  node_pools     = [for name, reqs in local.launching_pools : { name = name, requirement = reqs }]
}

output "controller_policy_size" {
  value = data.stowage_controller_policy.prod.size
}
