output "iam_role_name" {
  description = "Name of the controller's IAM role."
  value       = stowage_controller_role.this.name
}

output "iam_role_arn" {
  description = "ARN of the controller's IAM role."
  value       = stowage_controller_role.this.arn
}

output "iam_role_unique_id" {
  description = "Unique id (AROA...) of the controller's IAM role."
  value       = stowage_controller_role.this.unique_id
}

output "pod_identity_association_id" {
  description = "Id of the controller's Pod Identity association; null with IRSA."
  value       = var.enable_pod_identity ? stowage_controller_role.this.pod_identity_association_id : null
}

output "controller_policy_json" {
  description = "The controller's IAM policy, as generated for the cluster, its node role and its pools: for review, or for a permissions boundary."
  value       = data.stowage_controller_policy.this.json
}

output "launchable_instance_types" {
  description = "The instance types (or family wildcards such as `m6i.*`) the controller's policy lets it launch; empty for any."
  value       = data.stowage_controller_policy.this.launchable_instance_types
}

output "node_iam_role_name" {
  description = "Name of the nodes' IAM role, for the node classes' `role` (the `node-pools` module's `node_role`). Known once the controller is installed: node classes and pools that take it are created after the controller's CRDs, and destroyed before the controller, which drains their nodes."
  value       = stowage_node_role.this.name
  depends_on  = [stowage_controller.this]
}

output "node_iam_role_arn" {
  description = "ARN of the nodes' IAM role (for an EKS access entry of type EC2_LINUX, or an aws-auth mapRoles entry, so the nodes can join)."
  value       = stowage_node_role.this.arn
}

output "instance_profile_name" {
  description = "Name of the nodes' instance profile (the role's name)."
  value       = stowage_node_role.this.instance_profile_name
}

output "instance_profile_arn" {
  description = "ARN of the nodes' instance profile."
  value       = stowage_node_role.this.instance_profile_arn
}

output "queue_name" {
  description = "Name of the interruption queue; null without `enable_spot_termination`."
  value       = one(stowage_interruption_queue.this[*].name)
}

output "queue_arn" {
  description = "ARN of the interruption queue; null without `enable_spot_termination`."
  value       = one(stowage_interruption_queue.this[*].arn)
}

output "queue_url" {
  description = "URL of the interruption queue; null without `enable_spot_termination`."
  value       = one(stowage_interruption_queue.this[*].url)
}

output "dead_letter_queue_url" {
  description = "URL of the dead-letter queue, where warnings the Lambda could not handle wait for inspection; null without `enable_spot_termination`."
  value       = one(stowage_interruption_queue.this[*].dlq_url)
}

output "event_rules" {
  description = "ARNs of the EventBridge rules by kind of warning; empty without `enable_spot_termination`."
  value       = try(stowage_interruption_queue.this[0].rules, {})
}

output "interruption_handler_function_arn" {
  description = "ARN of the interruption Lambda; null without `enable_spot_termination`."
  value       = one(stowage_interruption_handler.this[*].function_arn)
}

output "interruption_handler_role_arn" {
  description = "ARN of the interruption Lambda's role, which its access entry maps into the cluster; null without `enable_spot_termination`."
  value       = one(stowage_interruption_handler.this[*].role_arn)
}

output "namespace" {
  description = "The controller's namespace."
  value       = stowage_controller.this.namespace
}

output "service_account" {
  description = "The controller's service account."
  value       = stowage_controller.this.service_account
}
