# One NodePool per workload class, as the seed story lays them out: web on spot
# first with an on-demand fallback of lower weight, batch on spot, GPU inference
# on diversified types consolidated only when empty, and GPU training on
# reserved capacity. Each class has its own budgets, with a business-hours
# window that holds back the disruptions a class cannot afford by day.

locals {
  discovery = var.discovery_tags != null ? var.discovery_tags : { "stowage.dev/discovery" = var.cluster_name }

  zone_requirement = length(var.zones) > 0 ? [{ key = "topology.kubernetes.io/zone", operator = "In", values = var.zones, min_values = null }] : []

  # The size caps: a pool of small pods with no cap puts most of a batch on
  # one .metal node, which the cheapest fit often is.
  size_cap = {
    for class, cpu in { web = var.web.max_instance_cpu, batch = var.batch.max_instance_cpu } :
    class => cpu == null ? [] : [{ key = "stowage.dev/instance-cpu", operator = "Lte", values = [tostring(cpu)], min_values = null }]
  }

  # Every pool's name and requirements, from the inputs alone: the pool
  # resources are made from them, and the policy_node_pools output hands them
  # to the controller's policy without a reference to the resources (which
  # would order the controller's role to go before the pools on destroy).
  pools = {
    web-spot = {
      enabled = var.web.enabled
      name    = "${var.name_prefix}web-spot"
      requirement = concat([
        { key = "stowage.dev/instance-family", operator = "In", values = var.web.instance_families, min_values = null },
        { key = "stowage.dev/capacity-type", operator = "In", values = ["spot"], min_values = null },
      ], local.size_cap.web, local.zone_requirement)
    }
    web-on-demand = {
      enabled = var.web.enabled
      name    = "${var.name_prefix}web-on-demand"
      requirement = concat([
        { key = "stowage.dev/instance-family", operator = "In", values = var.web.instance_families, min_values = null },
        { key = "stowage.dev/capacity-type", operator = "In", values = ["on-demand"], min_values = null },
      ], local.size_cap.web, local.zone_requirement)
    }
    batch = {
      enabled = var.batch.enabled
      name    = "${var.name_prefix}batch-spot"
      requirement = concat([
        { key = "stowage.dev/instance-family", operator = "In", values = var.batch.instance_families, min_values = null },
        { key = "stowage.dev/capacity-type", operator = "In", values = ["spot"], min_values = null },
      ], local.size_cap.batch, local.zone_requirement)
    }
    gpu_inference = {
      enabled = var.gpu_inference.enabled
      name    = "${var.name_prefix}gpu-inference"
      requirement = concat([
        { key = "node.kubernetes.io/instance-type", operator = "In", values = var.gpu_inference.instance_types, min_values = var.gpu_inference.min_types },
        { key = "stowage.dev/capacity-type", operator = "In", values = var.gpu_inference.capacity_types, min_values = null },
      ], local.zone_requirement)
    }
    gpu_training = {
      enabled = var.gpu_training.enabled
      name    = "${var.name_prefix}gpu-training"
      requirement = concat([
        { key = "node.kubernetes.io/instance-type", operator = "In", values = var.gpu_training.instance_types, min_values = null },
        { key = "stowage.dev/capacity-type", operator = "In", values = var.gpu_training.on_demand_fallback ? ["reserved", "on-demand"] : ["reserved"], min_values = null },
      ], local.zone_requirement)
    }
  }

  # The budgets of each class: a cap at any time, and a tighter one for some
  # reasons during business hours.
  budgets = {
    for class, c in {
      web           = var.web
      batch         = var.batch
      gpu_inference = var.gpu_inference
      gpu_training  = var.gpu_training
      } : class => [
      { nodes = c.budget, schedule = null, duration = null, reasons = null },
      { nodes = c.business_hours_budget, schedule = var.business_hours.schedule, duration = var.business_hours.duration, reasons = c.business_hours_reasons },
    ]
  }
}

resource "stowage_node_class" "general" {
  count = var.web.enabled || var.batch.enabled ? 1 : 0

  name           = "${var.name_prefix}general"
  adopt_existing = var.adopt_existing
  role           = var.node_role
  tags           = var.tags

  ami_selector_term {
    alias = "bottlerocket@latest"
  }
  subnet_selector_term {
    tags = local.discovery
  }
  security_group_selector_term {
    tags = local.discovery
  }
}

resource "stowage_node_class" "gpu" {
  count = var.gpu_inference.enabled ? 1 : 0

  name           = "${var.name_prefix}gpu"
  adopt_existing = var.adopt_existing
  role           = var.node_role
  tags           = var.tags

  ami_selector_term {
    alias = "al2023@latest"
  }
  subnet_selector_term {
    tags = local.discovery
  }
  security_group_selector_term {
    tags = local.discovery
  }
  block_device_mapping {
    device_name = "/dev/xvda"
    root_volume = true
    ebs {
      volume_size = var.gpu_inference.root_volume_size
      volume_type = "gp3"
      encrypted   = true
    }
  }
}

resource "stowage_node_class" "gpu_training" {
  count = var.gpu_training.enabled ? 1 : 0

  name           = "${var.name_prefix}gpu-training"
  adopt_existing = var.adopt_existing
  role           = var.node_role
  tags           = var.tags

  ami_selector_term {
    alias = "al2023@latest"
  }
  subnet_selector_term {
    tags = local.discovery
  }
  security_group_selector_term {
    tags = local.discovery
  }
  dynamic "capacity_reservation_selector_term" {
    for_each = var.gpu_training.capacity_reservation_ids
    content {
      id = capacity_reservation_selector_term.value
    }
  }
  dynamic "capacity_reservation_selector_term" {
    for_each = length(var.gpu_training.capacity_reservation_tags) > 0 ? [var.gpu_training.capacity_reservation_tags] : []
    content {
      tags = capacity_reservation_selector_term.value
    }
  }
  block_device_mapping {
    device_name = "/dev/xvda"
    root_volume = true
    ebs {
      volume_size = var.gpu_training.root_volume_size
      volume_type = "gp3"
      encrypted   = true
    }
  }
}

# Warm room for GPU inference workloads (gpu_inference.headroom): Stowage keeps
# nodes for that many more pods of each workload's template, on whichever pool
# the template selects.
resource "stowage_capacity_buffer" "gpu_inference" {
  for_each = var.gpu_inference.enabled ? var.gpu_inference.headroom : {}

  namespace      = each.value.namespace
  name           = each.key
  adopt_existing = var.adopt_existing
  replicas       = each.value.replicas

  scalable_ref {
    api_group = each.value.kind == "Job" ? "batch" : "apps"
    kind      = each.value.kind
    name      = each.value.workload
  }

  depends_on = [stowage_node_pool.gpu_inference]
}
