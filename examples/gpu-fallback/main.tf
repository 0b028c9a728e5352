# The seed story's GPU shortage: at 2 AM the inference tier scales out, and
# AWS has no g5.12xlarge left in the region. A node group of that one type
# (Cluster Autoscaler's) keeps asking for it while vLLM waits twenty minutes.
#
# Here vLLM runs on the A10G it was tuned on, in a pool of two A10G sizes
# (g5.12xlarge, then g5.24xlarge: the same four GPUs on a bigger host), and
# on L4 (g6.12xlarge) only when no A10G is left, through a second pool of
# lower weight: Stowage tries pools by weight, then the cheapest type of a
# pool that has capacity. (No min_values on the A10G pool: with one of its
# two types short it would no longer have the two that min_values = 2 asks
# for, and the L4 pool would take over at once.) Three stowage_plan data sources show in
# `terraform plan` what the spike launches usually, with g5.12xlarge short,
# and with every A10G short, before any shortage happens.

locals {
  # One place for the pools' requirements: the pools are made from it, and
  # the controller's policy reads it (allowing exactly these three types).
  gpu_pools = {
    gpu-inference = {
      weight = 50
      requirement = [
        { key = "node.kubernetes.io/instance-type", operator = "In", values = ["g5.12xlarge", "g5.24xlarge"], min_values = null },
        { key = "stowage.dev/capacity-type", operator = "In", values = ["on-demand"], min_values = null },
      ]
    }
    gpu-inference-l4 = {
      weight = 10
      requirement = [
        { key = "node.kubernetes.io/instance-type", operator = "In", values = ["g6.12xlarge"], min_values = null },
        { key = "stowage.dev/capacity-type", operator = "In", values = ["on-demand"], min_values = null },
      ]
    }
  }
}

module "stowage" {
  source = "../../modules/stowage"

  cluster_name                       = var.cluster_name
  region                             = var.region
  cluster_endpoint                   = var.cluster_endpoint
  cluster_certificate_authority_data = var.cluster_certificate_authority_data

  enable_pod_identity    = var.oidc_provider_arn == null
  enable_irsa            = var.oidc_provider_arn != null
  irsa_oidc_provider_arn = var.oidc_provider_arn

  node_pools                        = [for name, p in local.gpu_pools : { name = name, requirement = p.requirement }]
  interruption_handler_architecture = var.interruption_handler_architecture
}

resource "stowage_node_class" "gpu" {
  name = "gpu"
  role = module.stowage.node_iam_role_name
  ami_selector_term {
    alias = "al2023@latest"
  }
  subnet_selector_term {
    tags = { "stowage.dev/discovery" = var.cluster_name }
  }
  security_group_selector_term {
    tags = { "stowage.dev/discovery" = var.cluster_name }
  }
  block_device_mapping {
    device_name = "/dev/xvda"
    root_volume = true
    ebs {
      volume_size = "200Gi"
      volume_type = "gp3"
      encrypted   = true
    }
  }
}

resource "stowage_node_pool" "gpu" {
  for_each                 = local.gpu_pools
  name                     = each.key
  weight                   = each.value.weight
  labels                   = { tier = "inference" }
  limits                   = { "nvidia.com/gpu" = "64" }
  allow_destroy_with_nodes = var.allow_destroy_with_nodes

  node_class_ref {
    name = stowage_node_class.gpu.name
  }
  taint {
    key    = "nvidia.com/gpu"
    value  = "true"
    effect = "NoSchedule"
  }
  dynamic "requirement" {
    for_each = each.value.requirement
    content {
      key        = requirement.value.key
      operator   = requirement.value.operator
      values     = requirement.value.values
      min_values = requirement.value.min_values
    }
  }
  disruption {
    # Warm, model-loaded nodes are not moved; empty ones go after 10 minutes.
    consolidation_policy = "WhenEmpty"
    consolidate_after    = "10m"
    budget {
      nodes = "10%"
    }
  }
}

# Read during `terraform plan` (the pool and class through locals).
locals {
  pools   = values(stowage_node_pool.gpu)
  classes = [stowage_node_class.gpu]
  vllm = {
    name          = "vllm"
    replicas      = 4
    requests      = { cpu = "8", memory = "64Gi", "nvidia.com/gpu" = "4" }
    node_selector = { tier = "inference" }
  }
  zones = ["us-east-1a", "us-east-1b", "us-east-1c"]
}

# vLLM scaled out for the spike: each replica takes a whole 4-GPU node.
data "stowage_plan" "usual" {
  node_pools   = local.pools
  node_classes = local.classes
  pod {
    name          = local.vllm.name
    replicas      = local.vllm.replicas
    requests      = local.vllm.requests
    node_selector = local.vllm.node_selector
    toleration {
      key      = "nvidia.com/gpu"
      operator = "Exists"
      effect   = "NoSchedule"
    }
  }
}

# The same spike with no g5.12xlarge anywhere in the region.
data "stowage_plan" "g5_12xlarge_short" {
  node_pools   = local.pools
  node_classes = local.classes
  unavailable  = [for z in local.zones : "g5.12xlarge:${z}"]
  pod {
    name          = local.vllm.name
    replicas      = local.vllm.replicas
    requests      = local.vllm.requests
    node_selector = local.vllm.node_selector
    toleration {
      key      = "nvidia.com/gpu"
      operator = "Exists"
      effect   = "NoSchedule"
    }
  }
}

# And with no A10G at all: the L4 pool takes over.
data "stowage_plan" "a10g_short" {
  node_pools   = local.pools
  node_classes = local.classes
  unavailable  = flatten([for z in local.zones : ["g5.12xlarge:${z}", "g5.24xlarge:${z}"]])
  pod {
    name          = local.vllm.name
    replicas      = local.vllm.replicas
    requests      = local.vllm.requests
    node_selector = local.vllm.node_selector
    toleration {
      key      = "nvidia.com/gpu"
      operator = "Exists"
      effect   = "NoSchedule"
    }
  }
}

check "spike_survives_the_shortage" {
  assert {
    condition     = length(data.stowage_plan.g5_12xlarge_short.unschedulable) + length(data.stowage_plan.a10g_short.unschedulable) == 0
    error_message = "in a GPU shortage, vLLM pods stay pending: ${jsonencode(concat(data.stowage_plan.g5_12xlarge_short.unschedulable, data.stowage_plan.a10g_short.unschedulable))}"
  }
}
