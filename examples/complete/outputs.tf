output "controller_role_arn" {
  description = "The controller's IAM role."
  value       = module.stowage.iam_role_arn
}

output "node_role_name" {
  description = "The nodes' IAM role: map its ARN into the cluster (an EC2_LINUX access entry) so they can join."
  value       = module.stowage.node_iam_role_name
}

output "node_role_arn" {
  description = "ARN of the nodes' IAM role."
  value       = module.stowage.node_iam_role_arn
}

output "queue_url" {
  description = "The interruption queue."
  value       = module.stowage.queue_url
}

output "node_pools" {
  description = "The NodePools, by workload class."
  value       = module.node_pools.node_pool_names
}

output "spike_cost_per_hour" {
  description = "What the nodes for the 2 AM spike cost, US dollars per hour."
  value       = data.stowage_plan.spike.cost_per_hour
}

output "spike_plan" {
  description = "The nodes the spike needs, by pool, instance type, zone and capacity type."
  value       = data.stowage_plan.spike.summary
}
