variable "cluster_name" {
  description = "Name of the EKS cluster. Node classes find their subnets and security groups by the tag `stowage.dev/discovery = <cluster_name>` unless `discovery_tags` says otherwise."
  type        = string
  validation {
    condition     = can(regex("^[0-9A-Za-z][0-9A-Za-z_-]{0,99}$", var.cluster_name))
    error_message = "cluster_name must be an EKS cluster name: 1 to 100 letters, digits, '-' or '_', starting with a letter or digit."
  }
}

variable "node_role" {
  description = "IAM role of the nodes (the `stowage` module's `node_role_name` output); Stowage manages an instance profile for it."
  type        = string
  validation {
    condition     = can(regex("^[\\w+=,.@-]{1,64}$", var.node_role))
    error_message = "node_role must be an IAM role name (not an ARN): 1 to 64 letters, digits or +=,.@_-."
  }
}

variable "name_prefix" {
  description = "Prefix of every NodePool and NodeClass name, e.g. `team-a-`; empty by default. Two calls of this module in one cluster need different prefixes."
  type        = string
  default     = ""
  validation {
    condition     = var.name_prefix == "" || can(regex("^[a-z0-9]([-a-z0-9]{0,30}[-a-z0-9])?$", var.name_prefix))
    error_message = "name_prefix must be empty or up to 32 lower-case letters, digits and '-', starting with a letter or digit, such as \"team-a-\"."
  }
}

variable "discovery_tags" {
  description = "Tags that select the nodes' subnets and security groups; `{\"stowage.dev/discovery\" = <cluster_name>}` when null."
  type        = map(string)
  default     = null
  validation {
    condition     = var.discovery_tags == null || try(length(var.discovery_tags) > 0, false)
    error_message = "discovery_tags must name at least one tag, or be null for the default {\"stowage.dev/discovery\" = <cluster_name>}."
  }
}

variable "zones" {
  description = "Availability zones every pool may launch into, e.g. `[\"us-east-1a\", \"us-east-1b\"]`; every zone of the selected subnets when empty."
  type        = list(string)
  default     = []
  validation {
    condition     = alltrue([for z in var.zones : can(regex("^[a-z]{2}(-[a-z]+)+-[0-9][a-z]$", z))])
    error_message = "zones must be availability zone names such as us-east-1a."
  }
}

variable "tags" {
  description = "Tags put on the nodes' instances, volumes and launch templates."
  type        = map(string)
  default     = {}
}

variable "business_hours" {
  description = "The window in which voluntary disruption is held back (each class's `business_hours_budget` for its `business_hours_reasons`): a five-field cron expression in UTC that opens it, and how long it stays open. Monday to Friday, 09:00 to 19:00 UTC by default."
  type = object({
    schedule = optional(string, "0 9 * * 1-5")
    duration = optional(string, "10h")
  })
  default  = {}
  nullable = false
  validation {
    condition     = can(regex("^\\s*\\S+(\\s+\\S+){4}\\s*$", var.business_hours.schedule)) || contains(["@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"], var.business_hours.schedule)
    error_message = "business_hours.schedule must be a five-field cron expression (minute hour day-of-month month day-of-week) such as \"0 9 * * 1-5\", or a macro such as @daily."
  }
  validation {
    condition     = can(regex("^([0-9]+(\\.[0-9]+)?(h|m|s))+$", var.business_hours.duration))
    error_message = "business_hours.duration must be a duration such as 10h or 8h30m."
  }
}

variable "web" {
  description = <<-EOT
    The web class: a spot pool (`web-spot`) tried first and an on-demand pool (`web-on-demand`) of lower weight that
    takes over when spot is short, both on the same diversified families, of at most `max_instance_cpu` vCPUs (16 by
    default, as the seed's pools: without a cap the cheapest fit for a large batch of pods is often one .metal node
    that holds most of them; null lifts it). `budget` caps disruption at any time;
    `business_hours_budget` caps the `business_hours_reasons` during `business_hours`. Limits are per pool.
    `consolidation_policy` is WhenEmptyOrUnderutilized, or Balanced to weigh each move's saving against the
    disruption of the pods it moves; `consolidation_min_savings` (a percentage such as "15%") is the share of the
    nodes' price a replacement must save, the controller's default when null. `return_after` is how long spot must
    have stayed available before the on-demand pool's nodes go back to it (Never to keep them).
  EOT
  type = object({
    enabled                   = optional(bool, true)
    instance_families         = optional(list(string), ["c6i", "c7i", "m6i", "m7i", "c6a", "m6a"])
    max_instance_cpu          = optional(number, 16)
    spot_weight               = optional(number, 100)
    on_demand_weight          = optional(number, 10)
    spot_limits               = optional(map(string), { cpu = "1000", memory = "4000Gi" })
    on_demand_limits          = optional(map(string), { cpu = "500", memory = "2000Gi" })
    labels                    = optional(map(string), { tier = "web" })
    consolidate_after         = optional(string, "5m")
    consolidation_policy      = optional(string, "WhenEmptyOrUnderutilized")
    consolidation_min_savings = optional(string)
    return_after              = optional(string, "10m")
    expire_after              = optional(string, "720h")
    budget                    = optional(string, "10%")
    business_hours_budget     = optional(string, "0")
    business_hours_reasons    = optional(list(string), ["Drifted", "Underutilized"])
  })
  default  = {}
  nullable = false
  validation {
    condition     = var.web.max_instance_cpu == null ? true : var.web.max_instance_cpu >= 2
    error_message = "web.max_instance_cpu must be at least 2 vCPUs, or null for no cap."
  }
  validation {
    condition     = length(var.web.instance_families) >= 2
    error_message = "web.instance_families must list at least two families (say four or more): a pool of one family reintroduces the shortages Stowage falls back from."
  }
  validation {
    condition     = var.web.spot_weight > var.web.on_demand_weight && var.web.on_demand_weight >= 1 && var.web.spot_weight <= 100
    error_message = "web.spot_weight must be above web.on_demand_weight, both from 1 to 100: the spot pool is tried first, on-demand only when spot is short."
  }
  validation {
    condition     = alltrue([for b in [var.web.budget, var.web.business_hours_budget] : can(regex("^((100|[0-9]{1,2})%|[0-9]+)$", b))])
    error_message = "web.budget and web.business_hours_budget must be node counts such as \"3\" or percentages from 0% to 100% such as \"10%\"."
  }
  validation {
    condition     = alltrue([for r in var.web.business_hours_reasons : contains(["Empty", "Underutilized", "Drifted", "Fallback"], r)])
    error_message = "web.business_hours_reasons must be among Empty, Underutilized, Drifted and Fallback (expiry is not budgeted)."
  }
  validation {
    condition     = contains(["WhenEmptyOrUnderutilized", "Balanced"], var.web.consolidation_policy)
    error_message = "web.consolidation_policy must be WhenEmptyOrUnderutilized or Balanced."
  }
  validation {
    condition     = var.web.consolidation_min_savings == null || can(regex("^(100|[0-9]{1,2})%$", var.web.consolidation_min_savings))
    error_message = "web.consolidation_min_savings must be a percentage from 0% to 100% such as \"15%\", or null for the controller's default."
  }
  validation {
    condition     = var.web.return_after == "Never" || can(regex("^([0-9]+(\\.[0-9]+)?(h|m|s))+$", var.web.return_after))
    error_message = "web.return_after must be a duration such as 10m, or Never."
  }
}

variable "batch" {
  description = <<-EOT
    The batch class: one spot pool (`batch-spot`), tainted so that only pods that tolerate `taint` land there, and
    consolidated only when empty by default so that running jobs are not moved; its nodes have at most
    `max_instance_cpu` vCPUs (32 by default; null lifts the cap).
  EOT
  type = object({
    enabled                   = optional(bool, true)
    instance_families         = optional(list(string), ["c6i", "c7i", "m6i", "m7i", "r6i", "r7i"])
    max_instance_cpu          = optional(number, 32)
    weight                    = optional(number, 20)
    limits                    = optional(map(string), { cpu = "2000", memory = "8000Gi" })
    labels                    = optional(map(string), { tier = "batch" })
    taint                     = optional(object({ key = string, value = optional(string), effect = string }), { key = "workload", value = "batch", effect = "NoSchedule" })
    consolidation_policy      = optional(string, "WhenEmpty")
    consolidation_min_savings = optional(string)
    consolidate_after         = optional(string, "2m")
    expire_after              = optional(string, "168h")
    budget                    = optional(string, "20%")
    business_hours_budget     = optional(string, "20%")
    business_hours_reasons    = optional(list(string), ["Drifted"])
  })
  default  = {}
  nullable = false
  validation {
    condition     = var.batch.max_instance_cpu == null ? true : var.batch.max_instance_cpu >= 2
    error_message = "batch.max_instance_cpu must be at least 2 vCPUs, or null for no cap."
  }
  validation {
    condition     = length(var.batch.instance_families) >= 2
    error_message = "batch.instance_families must list at least two families: spot capacity is found across many."
  }
  validation {
    condition     = var.batch.weight >= 1 && var.batch.weight <= 100
    error_message = "batch.weight must be from 1 to 100."
  }
  validation {
    condition     = contains(["WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced"], var.batch.consolidation_policy)
    error_message = "batch.consolidation_policy must be WhenEmpty, WhenEmptyOrUnderutilized or Balanced."
  }
  validation {
    condition     = var.batch.consolidation_min_savings == null || can(regex("^(100|[0-9]{1,2})%$", var.batch.consolidation_min_savings))
    error_message = "batch.consolidation_min_savings must be a percentage from 0% to 100% such as \"15%\", or null for the controller's default."
  }
  validation {
    condition     = var.batch.taint == null || contains(["NoSchedule", "PreferNoSchedule", "NoExecute"], try(var.batch.taint.effect, ""))
    error_message = "batch.taint.effect must be NoSchedule, PreferNoSchedule or NoExecute (or set batch.taint = null for no taint)."
  }
  validation {
    condition     = alltrue([for b in [var.batch.budget, var.batch.business_hours_budget] : can(regex("^((100|[0-9]{1,2})%|[0-9]+)$", b))])
    error_message = "batch.budget and batch.business_hours_budget must be node counts such as \"3\" or percentages such as \"20%\"."
  }
  validation {
    condition     = alltrue([for r in var.batch.business_hours_reasons : contains(["Empty", "Underutilized", "Drifted", "Fallback"], r)])
    error_message = "batch.business_hours_reasons must be among Empty, Underutilized, Drifted and Fallback (expiry is not budgeted)."
  }
}

variable "gpu_inference" {
  description = <<-EOT
    The GPU inference class (`gpu-inference`): diversified GPU types of comparable shape so that a shortage of one
    falls back to the next, at least `min_types` of them kept open, tainted for GPU workloads, and consolidated only
    when empty (`WhenEmpty`) so that warm, model-loaded nodes are not moved; for the same reason a node on
    on-demand is not moved back to spot unless `return_after` is set to a duration. `min_nodes` keeps that many
    nodes whatever the load (a floor consolidation never goes below); `capacity_block_lead_time` is how long before a
    Capacity Block's end its nodes move off it (when `capacity_types` includes `reserved`). `headroom` keeps warm room
    for more replicas of GPU workloads: one CapacityBuffer (`stowage_capacity_buffer`) per entry, keyed by its name,
    holding room for `replicas` more pods of the workload's template (a Deployment, StatefulSet, ReplicaSet or Job in
    `namespace`), so that they start without waiting for a GPU node to boot; the cluster must serve the CapacityBuffer
    CRD (`stowage_controller` installs it where missing) and have the namespace.
  EOT
  type = object({
    enabled                  = optional(bool, true)
    instance_types           = optional(list(string), ["g5.12xlarge", "g5.24xlarge", "g6.12xlarge"])
    min_types                = optional(number, 2)
    capacity_types           = optional(list(string), ["on-demand"])
    weight                   = optional(number, 50)
    limits                   = optional(map(string), { "nvidia.com/gpu" = "64" })
    labels                   = optional(map(string), { tier = "inference" })
    taint                    = optional(object({ key = string, value = optional(string), effect = string }), { key = "nvidia.com/gpu", value = "true", effect = "NoSchedule" })
    root_volume_size         = optional(string, "200Gi")
    consolidate_after        = optional(string, "10m")
    return_after             = optional(string, "Never")
    expire_after             = optional(string, "720h")
    budget                   = optional(string, "10%")
    business_hours_budget    = optional(string, "0")
    business_hours_reasons   = optional(list(string), ["Empty", "Drifted"])
    min_nodes                = optional(number, 0)
    capacity_block_lead_time = optional(string, "60m")
    headroom = optional(map(object({
      namespace = string
      workload  = string
      kind      = optional(string, "Deployment")
      replicas  = optional(number, 1)
    })), {})
  })
  default  = {}
  nullable = false
  validation {
    condition     = alltrue([for h in values(var.gpu_inference.headroom) : contains(["Deployment", "StatefulSet", "ReplicaSet", "Job"], h.kind) && h.replicas >= 1 && floor(h.replicas) == h.replicas])
    error_message = "gpu_inference.headroom entries must name a Deployment, StatefulSet, ReplicaSet or Job (kind) and keep room for a whole number of replicas, at least 1."
  }
  validation {
    condition     = var.gpu_inference.min_nodes >= 0 && var.gpu_inference.min_nodes <= 1000 && floor(var.gpu_inference.min_nodes) == var.gpu_inference.min_nodes
    error_message = "gpu_inference.min_nodes must be a whole number of nodes from 0 to 1000: the pool keeps that many whatever the load."
  }
  validation {
    condition     = can(regex("^([0-9]+h)?([0-9]+m)?$", var.gpu_inference.capacity_block_lead_time)) && var.gpu_inference.capacity_block_lead_time != ""
    error_message = "gpu_inference.capacity_block_lead_time must be a duration in hours and minutes such as \"60m\" or \"1h30m\" (at least 30m: EC2 terminates a Capacity Block's instances 30 minutes before its end)."
  }
  validation {
    condition     = length(var.gpu_inference.instance_types) >= 2 && var.gpu_inference.min_types >= 1 && var.gpu_inference.min_types <= length(var.gpu_inference.instance_types)
    error_message = "gpu_inference.instance_types must list at least two types (say g5.12xlarge, g5.24xlarge, g6.12xlarge) and gpu_inference.min_types be from 1 to their number: one GPU type is the shortage this pool exists to survive."
  }
  validation {
    condition     = length(var.gpu_inference.capacity_types) > 0 && alltrue([for c in var.gpu_inference.capacity_types : contains(["on-demand", "spot", "reserved"], c)])
    error_message = "gpu_inference.capacity_types must list on-demand, spot or reserved."
  }
  validation {
    condition     = var.gpu_inference.weight >= 1 && var.gpu_inference.weight <= 100
    error_message = "gpu_inference.weight must be from 1 to 100."
  }
  validation {
    condition     = alltrue([for b in [var.gpu_inference.budget, var.gpu_inference.business_hours_budget] : can(regex("^((100|[0-9]{1,2})%|[0-9]+)$", b))])
    error_message = "gpu_inference.budget and gpu_inference.business_hours_budget must be node counts such as \"1\" or percentages such as \"10%\"."
  }
  validation {
    condition     = alltrue([for r in var.gpu_inference.business_hours_reasons : contains(["Empty", "Underutilized", "Drifted", "Fallback"], r)])
    error_message = "gpu_inference.business_hours_reasons must be among Empty, Underutilized, Drifted and Fallback (expiry is not budgeted)."
  }
  validation {
    condition     = var.gpu_inference.return_after == "Never" || can(regex("^([0-9]+(\\.[0-9]+)?(h|m|s))+$", var.gpu_inference.return_after))
    error_message = "gpu_inference.return_after must be a duration such as 30m, or Never."
  }
}

variable "gpu_training" {
  description = <<-EOT
    The GPU training class (`gpu-training`): nodes launched into On-Demand Capacity Reservations or Capacity Blocks
    (capacity type `reserved`), selected by id or by tags, for the guaranteed floor that training runs need. Off by
    default; enabling it needs `capacity_reservation_ids` or `capacity_reservation_tags`. Nodes never expire and are
    removed only when empty, one at a time. `min_nodes` keeps that many nodes whatever the load;
    `capacity_block_lead_time` is how long before a block's end its nodes are replaced and drained (at least 30m, when
    EC2 starts terminating them).
  EOT
  type = object({
    enabled                   = optional(bool, false)
    instance_types            = optional(list(string), ["p5.48xlarge", "p4d.24xlarge"])
    capacity_reservation_ids  = optional(list(string), [])
    capacity_reservation_tags = optional(map(string), {})
    on_demand_fallback        = optional(bool, false)
    weight                    = optional(number, 60)
    limits                    = optional(map(string), { "nvidia.com/gpu" = "64" })
    labels                    = optional(map(string), { tier = "training" })
    taint                     = optional(object({ key = string, value = optional(string), effect = string }), { key = "nvidia.com/gpu", value = "true", effect = "NoSchedule" })
    root_volume_size          = optional(string, "500Gi")
    consolidate_after         = optional(string, "30m")
    budget                    = optional(string, "1")
    business_hours_budget     = optional(string, "0")
    business_hours_reasons    = optional(list(string), ["Empty", "Drifted"])
    min_nodes                 = optional(number, 0)
    capacity_block_lead_time  = optional(string, "60m")
  })
  default  = {}
  nullable = false
  validation {
    condition     = var.gpu_training.min_nodes >= 0 && var.gpu_training.min_nodes <= 1000 && floor(var.gpu_training.min_nodes) == var.gpu_training.min_nodes
    error_message = "gpu_training.min_nodes must be a whole number of nodes from 0 to 1000: the pool keeps that many whatever the load."
  }
  validation {
    condition     = can(regex("^([0-9]+h)?([0-9]+m)?$", var.gpu_training.capacity_block_lead_time)) && var.gpu_training.capacity_block_lead_time != ""
    error_message = "gpu_training.capacity_block_lead_time must be a duration in hours and minutes such as \"60m\" or \"1h30m\" (at least 30m: EC2 terminates a Capacity Block's instances 30 minutes before its end)."
  }
  validation {
    condition     = !var.gpu_training.enabled || length(var.gpu_training.capacity_reservation_ids) > 0 || length(var.gpu_training.capacity_reservation_tags) > 0
    error_message = "gpu_training.enabled needs the reservations to launch into: set gpu_training.capacity_reservation_ids (cr-...) or gpu_training.capacity_reservation_tags."
  }
  validation {
    condition     = alltrue([for id in var.gpu_training.capacity_reservation_ids : can(regex("^cr-[0-9a-f]{8,17}$", id))])
    error_message = "gpu_training.capacity_reservation_ids must be reservation ids such as cr-0123456789abcdef0."
  }
  validation {
    condition     = length(var.gpu_training.instance_types) >= 1
    error_message = "gpu_training.instance_types must list the types the reservations hold."
  }
  validation {
    condition     = var.gpu_training.weight >= 1 && var.gpu_training.weight <= 100
    error_message = "gpu_training.weight must be from 1 to 100."
  }
  validation {
    condition     = alltrue([for b in [var.gpu_training.budget, var.gpu_training.business_hours_budget] : can(regex("^((100|[0-9]{1,2})%|[0-9]+)$", b))])
    error_message = "gpu_training.budget and gpu_training.business_hours_budget must be node counts such as \"1\" or percentages such as \"10%\"."
  }
  validation {
    condition     = alltrue([for r in var.gpu_training.business_hours_reasons : contains(["Empty", "Underutilized", "Drifted", "Fallback"], r)])
    error_message = "gpu_training.business_hours_reasons must be among Empty, Underutilized, Drifted and Fallback (expiry is not budgeted)."
  }
}

variable "adopt_existing" {
  description = "Lets the module take over NodePools and NodeClasses of its names that already exist in the cluster (made with kubectl or another state), overwriting them with its configuration. False by default: a plan that would create an object that exists fails, naming the import block that brings it under Terraform unchanged; set `name_prefix` to keep the module's objects apart from others."
  type        = bool
  default     = false
  nullable    = false
}

variable "allow_destroy_with_nodes" {
  description = "Lets `terraform destroy` (or disabling a class) delete pools that still have nodes, which are then drained and terminated. Set it to true and apply before such a destroy."
  type        = bool
  default     = false
  nullable    = false
}
