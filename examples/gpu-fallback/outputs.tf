output "usual_instance_types" {
  description = "The instance types the spike launches when every type has capacity."
  value       = distinct([for n in data.stowage_plan.usual.nodes : n.instance_type])
}

output "fallback_instance_types" {
  description = "The instance types it launches instead when g5.12xlarge is short."
  value       = distinct([for n in data.stowage_plan.g5_12xlarge_short.nodes : n.instance_type])
}

output "last_resort_instance_types" {
  description = "The instance types it launches when every A10G type is short."
  value       = distinct([for n in data.stowage_plan.a10g_short.nodes : n.instance_type])
}

output "fallback_plan" {
  description = "The nodes of the g5.12xlarge shortage, by pool, instance type, zone and price."
  value       = data.stowage_plan.g5_12xlarge_short.summary
}

output "fallback_extra_cost_per_hour" {
  description = "What the fallback costs beside the usual plan, US dollars per hour."
  value       = data.stowage_plan.g5_12xlarge_short.cost_per_hour - data.stowage_plan.usual.cost_per_hour
}

output "controller_role_arn" {
  description = "The controller's IAM role."
  value       = module.stowage.iam_role_arn
}

output "launchable_instance_types" {
  description = "The instance types the controller's policy lets it launch: the pools' three."
  value       = module.stowage.launchable_instance_types
}
