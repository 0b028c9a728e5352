output "node_pool_names" {
  description = "Names of the NodePools, by workload class (web, batch, gpu_inference, gpu_training); an empty list for a class that is off."
  value = {
    web           = [for k in ["spot", "on-demand"] : stowage_node_pool.web[k].name if contains(keys(stowage_node_pool.web), k)]
    batch         = stowage_node_pool.batch[*].name
    gpu_inference = stowage_node_pool.gpu_inference[*].name
    gpu_training  = stowage_node_pool.gpu_training[*].name
  }
}

output "node_class_names" {
  description = "Names of the NodeClasses: general (web and batch), gpu (inference) and gpu_training; null for a class no enabled pool uses."
  value = {
    general      = one(stowage_node_class.general[*].name)
    gpu          = one(stowage_node_class.gpu[*].name)
    gpu_training = one(stowage_node_class.gpu_training[*].name)
  }
}

output "node_pools" {
  description = "Every NodePool as planned, for the `node_pools` of a `stowage_plan` data source, which then shows in `terraform plan` what the policy costs for a workload."
  value = concat(
    [for k in ["spot", "on-demand"] : stowage_node_pool.web[k] if contains(keys(stowage_node_pool.web), k)],
    stowage_node_pool.batch, stowage_node_pool.gpu_inference, stowage_node_pool.gpu_training,
  )
}

output "node_classes" {
  description = "Every NodeClass as planned, for the `node_classes` of a `stowage_plan` data source."
  value       = concat(stowage_node_class.general, stowage_node_class.gpu, stowage_node_class.gpu_training)
}

output "policy_node_pools" {
  description = "Every enabled NodePool's name and requirements, built from this module's inputs alone, for the `node_pools` of the `stowage` module (or of a `stowage_controller_policy`): the controller may launch only for these pools, only the instance types they allow. Built without a reference to the pool resources, so that the controller's role does not depend on them and a destroy removes the pools, draining their nodes, while the controller still holds its permissions."
  value       = [for k in ["web-spot", "web-on-demand", "batch", "gpu_inference", "gpu_training"] : { name = local.pools[k].name, requirement = local.pools[k].requirement } if local.pools[k].enabled]
}

output "capacity_buffer_names" {
  description = "The CapacityBuffers of gpu_inference.headroom, as namespace/name."
  value       = [for b in stowage_capacity_buffer.gpu_inference : b.id]
}
