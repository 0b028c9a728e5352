# Pass the pools through a local, as for stowage_plan: the policy is then
# generated during `terraform plan`, and launches are limited to these pools
# and the instance types they allow.
locals {
  launching_pools = [stowage_node_pool.web_spot, stowage_node_pool.gpu_inference]
}

data "stowage_controller_policy" "prod" {
  cluster_name   = "prod"
  node_role_arns = [stowage_node_role.nodes.arn]
  node_pools     = local.launching_pools
}

output "controller_policy_size" {
  value = data.stowage_controller_policy.prod.size
}
