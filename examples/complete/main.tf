# The seed story's layout on an existing EKS cluster: Stowage deployed by one
# module call (the IAM roles and the generated policy, the interruption queue
# and Lambda, the controller), and one NodePool per workload class by another
# (web on spot with an on-demand fallback, batch on spot, GPU inference on
# three diversified types), with the 2 AM spike planned during `terraform plan`.

module "stowage" {
  source = "../../modules/stowage"

  cluster_name                       = var.cluster_name
  region                             = var.region
  cluster_endpoint                   = var.cluster_endpoint
  cluster_certificate_authority_data = var.cluster_certificate_authority_data

  enable_pod_identity    = var.oidc_provider_arn == null
  enable_irsa            = var.oidc_provider_arn != null
  irsa_oidc_provider_arn = var.oidc_provider_arn

  # The controller may launch only for these pools, only the types they
  # allow: values made from the pools' inputs, not the pool resources, so
  # that a destroy drains the pools before the controller's role goes.
  node_pools = module.node_pools.policy_node_pools

  interruption_handler_architecture = var.interruption_handler_architecture
  tags                              = { cluster = var.cluster_name, team = "platform" }
}

module "node_pools" {
  source = "../../modules/node-pools"

  cluster_name             = var.cluster_name
  node_role                = module.stowage.node_iam_role_name
  zones                    = var.zones
  tags                     = { cluster = var.cluster_name, team = "platform" }
  allow_destroy_with_nodes = var.allow_destroy_with_nodes

  web = {
    spot_limits      = { cpu = "1000", memory = "4000Gi" }
    on_demand_limits = { cpu = "500", memory = "2000Gi" }
  }
}

# The 2 AM spike: four times the storefront's usual 40 replicas, and the
# inference tier scaled out, as the seed tells it.
data "stowage_plan" "spike" {
  node_pools   = module.node_pools.node_pools
  node_classes = module.node_pools.node_classes

  pod {
    name          = "storefront"
    replicas      = 160
    requests      = { cpu = "1", memory = "2Gi" }
    node_selector = { tier = "web" }
    topology_spread {
      topology_key       = "topology.kubernetes.io/zone"
      when_unsatisfiable = "ScheduleAnyway"
    }
  }
  pod {
    name          = "vllm"
    replicas      = 6
    requests      = { cpu = "8", memory = "64Gi", "nvidia.com/gpu" = "4" }
    node_selector = { tier = "inference" }
    toleration {
      key      = "nvidia.com/gpu"
      operator = "Exists"
      effect   = "NoSchedule"
    }
  }
}

check "spike_fits" {
  assert {
    condition     = length(data.stowage_plan.spike.unschedulable) == 0
    error_message = "the pools cannot place the 2 AM spike: ${jsonencode(data.stowage_plan.spike.unschedulable)}"
  }
}
