resource "stowage_node_pool" "web" {
  for_each = var.web.enabled ? {
    spot      = { weight = var.web.spot_weight, limits = var.web.spot_limits }
    on-demand = { weight = var.web.on_demand_weight, limits = var.web.on_demand_limits }
  } : {}

  name                     = local.pools["web-${each.key}"].name
  weight                   = each.value.weight
  labels                   = var.web.labels
  limits                   = each.value.limits
  expire_after             = var.web.expire_after
  allow_destroy_with_nodes = var.allow_destroy_with_nodes
  adopt_existing           = var.adopt_existing

  node_class_ref {
    name = stowage_node_class.general[0].name
  }
  dynamic "requirement" {
    for_each = local.pools["web-${each.key}"].requirement
    content {
      key        = requirement.value.key
      operator   = requirement.value.operator
      values     = requirement.value.values
      min_values = requirement.value.min_values
    }
  }

  disruption {
    consolidation_policy      = var.web.consolidation_policy
    consolidation_min_savings = var.web.consolidation_min_savings
    consolidate_after         = var.web.consolidate_after
    return_after              = var.web.return_after
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

  name                     = local.pools.batch.name
  weight                   = var.batch.weight
  labels                   = var.batch.labels
  limits                   = var.batch.limits
  expire_after             = var.batch.expire_after
  allow_destroy_with_nodes = var.allow_destroy_with_nodes
  adopt_existing           = var.adopt_existing

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
  dynamic "requirement" {
    for_each = local.pools["batch"].requirement
    content {
      key        = requirement.value.key
      operator   = requirement.value.operator
      values     = requirement.value.values
      min_values = requirement.value.min_values
    }
  }

  disruption {
    consolidation_policy      = var.batch.consolidation_policy
    consolidation_min_savings = var.batch.consolidation_min_savings
    consolidate_after         = var.batch.consolidate_after
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

  name                     = local.pools.gpu_inference.name
  weight                   = var.gpu_inference.weight
  labels                   = var.gpu_inference.labels
  limits                   = var.gpu_inference.limits
  expire_after             = var.gpu_inference.expire_after
  allow_destroy_with_nodes = var.allow_destroy_with_nodes
  adopt_existing           = var.adopt_existing
  min_nodes                = var.gpu_inference.min_nodes > 0 ? var.gpu_inference.min_nodes : null
  capacity_block_lead_time = var.gpu_inference.capacity_block_lead_time

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
  dynamic "requirement" {
    for_each = local.pools["gpu_inference"].requirement
    content {
      key        = requirement.value.key
      operator   = requirement.value.operator
      values     = requirement.value.values
      min_values = requirement.value.min_values
    }
  }

  disruption {
    consolidation_policy = "WhenEmpty"
    consolidate_after    = var.gpu_inference.consolidate_after
    return_after         = var.gpu_inference.return_after
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

  name                     = local.pools.gpu_training.name
  weight                   = var.gpu_training.weight
  labels                   = var.gpu_training.labels
  limits                   = var.gpu_training.limits
  expire_after             = "Never"
  allow_destroy_with_nodes = var.allow_destroy_with_nodes
  adopt_existing           = var.adopt_existing
  min_nodes                = var.gpu_training.min_nodes > 0 ? var.gpu_training.min_nodes : null
  capacity_block_lead_time = var.gpu_training.capacity_block_lead_time

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
  dynamic "requirement" {
    for_each = local.pools["gpu_training"].requirement
    content {
      key        = requirement.value.key
      operator   = requirement.value.operator
      values     = requirement.value.values
      min_values = requirement.value.min_values
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
