resource "stowage_node_pool" "web" {
  for_each = var.web.enabled ? {
    spot      = { weight = var.web.spot_weight, capacity_type = "spot", limits = var.web.spot_limits }
    on-demand = { weight = var.web.on_demand_weight, capacity_type = "on-demand", limits = var.web.on_demand_limits }
  } : {}

  name                     = "${var.name_prefix}web-${each.key}"
  weight                   = each.value.weight
  labels                   = var.web.labels
  limits                   = each.value.limits
  expire_after             = var.web.expire_after
  allow_destroy_with_nodes = var.allow_destroy_with_nodes

  node_class_ref {
    name = stowage_node_class.general[0].name
  }
  requirement {
    key      = "stowage.dev/instance-family"
    operator = "In"
    values   = var.web.instance_families
  }
  requirement {
    key      = "stowage.dev/capacity-type"
    operator = "In"
    values   = [each.value.capacity_type]
  }
  dynamic "requirement" {
    for_each = local.zone_requirement
    content {
      key      = requirement.value.key
      operator = requirement.value.operator
      values   = requirement.value.values
    }
  }

  disruption {
    consolidation_policy = "WhenEmptyOrUnderutilized"
    consolidate_after    = var.web.consolidate_after
    dynamic "budget" {
      for_each = local.budgets.web
      content {
        nodes    = budget.value.nodes
        schedule = budget.value.schedule
        duration = budget.value.duration
        reasons  = budget.value.reasons
      }
    }
  }
}

resource "stowage_node_pool" "batch" {
  count = var.batch.enabled ? 1 : 0

  name                     = "${var.name_prefix}batch-spot"
  weight                   = var.batch.weight
  labels                   = var.batch.labels
  limits                   = var.batch.limits
  expire_after             = var.batch.expire_after
  allow_destroy_with_nodes = var.allow_destroy_with_nodes

  node_class_ref {
    name = stowage_node_class.general[0].name
  }
  dynamic "taint" {
    for_each = var.batch.taint == null ? [] : [var.batch.taint]
    content {
      key    = taint.value.key
      value  = taint.value.value
      effect = taint.value.effect
    }
  }
  requirement {
    key      = "stowage.dev/instance-family"
    operator = "In"
    values   = var.batch.instance_families
  }
  requirement {
    key      = "stowage.dev/capacity-type"
    operator = "In"
    values   = ["spot"]
  }
  dynamic "requirement" {
    for_each = local.zone_requirement
    content {
      key      = requirement.value.key
      operator = requirement.value.operator
      values   = requirement.value.values
    }
  }

  disruption {
    consolidation_policy = var.batch.consolidation_policy
    consolidate_after    = var.batch.consolidate_after
    dynamic "budget" {
      for_each = local.budgets.batch
      content {
        nodes    = budget.value.nodes
        schedule = budget.value.schedule
        duration = budget.value.duration
        reasons  = budget.value.reasons
      }
    }
  }
}

resource "stowage_node_pool" "gpu_inference" {
  count = var.gpu_inference.enabled ? 1 : 0

  name                     = "${var.name_prefix}gpu-inference"
  weight                   = var.gpu_inference.weight
  labels                   = var.gpu_inference.labels
  limits                   = var.gpu_inference.limits
  expire_after             = var.gpu_inference.expire_after
  allow_destroy_with_nodes = var.allow_destroy_with_nodes

  node_class_ref {
    name = stowage_node_class.gpu[0].name
  }
  dynamic "taint" {
    for_each = var.gpu_inference.taint == null ? [] : [var.gpu_inference.taint]
    content {
      key    = taint.value.key
      value  = taint.value.value
      effect = taint.value.effect
    }
  }
  requirement {
    key        = "node.kubernetes.io/instance-type"
    operator   = "In"
    values     = var.gpu_inference.instance_types
    min_values = var.gpu_inference.min_types
  }
  requirement {
    key      = "stowage.dev/capacity-type"
    operator = "In"
    values   = var.gpu_inference.capacity_types
  }
  dynamic "requirement" {
    for_each = local.zone_requirement
    content {
      key      = requirement.value.key
      operator = requirement.value.operator
      values   = requirement.value.values
    }
  }

  disruption {
    consolidation_policy = "WhenEmpty"
    consolidate_after    = var.gpu_inference.consolidate_after
    dynamic "budget" {
      for_each = local.budgets.gpu_inference
      content {
        nodes    = budget.value.nodes
        schedule = budget.value.schedule
        duration = budget.value.duration
        reasons  = budget.value.reasons
      }
    }
  }
}

resource "stowage_node_pool" "gpu_training" {
  count = var.gpu_training.enabled ? 1 : 0

  name                     = "${var.name_prefix}gpu-training"
  weight                   = var.gpu_training.weight
  labels                   = var.gpu_training.labels
  limits                   = var.gpu_training.limits
  expire_after             = "Never"
  allow_destroy_with_nodes = var.allow_destroy_with_nodes

  node_class_ref {
    name = stowage_node_class.gpu_training[0].name
  }
  dynamic "taint" {
    for_each = var.gpu_training.taint == null ? [] : [var.gpu_training.taint]
    content {
      key    = taint.value.key
      value  = taint.value.value
      effect = taint.value.effect
    }
  }
  requirement {
    key      = "node.kubernetes.io/instance-type"
    operator = "In"
    values   = var.gpu_training.instance_types
  }
  requirement {
    key      = "stowage.dev/capacity-type"
    operator = "In"
    values   = var.gpu_training.on_demand_fallback ? ["reserved", "on-demand"] : ["reserved"]
  }
  dynamic "requirement" {
    for_each = local.zone_requirement
    content {
      key      = requirement.value.key
      operator = requirement.value.operator
      values   = requirement.value.values
    }
  }

  disruption {
    consolidation_policy = "WhenEmpty"
    consolidate_after    = var.gpu_training.consolidate_after
    dynamic "budget" {
      for_each = local.budgets.gpu_training
      content {
        nodes    = budget.value.nodes
        schedule = budget.value.schedule
        duration = budget.value.duration
        reasons  = budget.value.reasons
      }
    }
  }
}
