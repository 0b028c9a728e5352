# One NodePool per workload class, as the seed story lays them out: web on spot
# first with an on-demand fallback of lower weight, batch on spot, GPU inference
# on diversified types consolidated only when empty, and GPU training on
# reserved capacity. Each class has its own budgets, with a business-hours
# window that holds back the disruptions a class cannot afford by day.

locals {
  discovery = var.discovery_tags != null ? var.discovery_tags : { "stowage.dev/discovery" = var.cluster_name }

  zone_requirement = length(var.zones) > 0 ? [{ key = "topology.kubernetes.io/zone", operator = "In", values = var.zones, min_values = null }] : []

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

  name = "${var.name_prefix}general"
  role = var.node_role
  tags = var.tags

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

  name = "${var.name_prefix}gpu"
  role = var.node_role
  tags = var.tags

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

  name = "${var.name_prefix}gpu-training"
  role = var.node_role
  tags = var.tags

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
