# Pass the pools and classes through a local: the data source then reads their
# planned values during `terraform plan` (a direct reference would make
# Terraform wait until they are applied).
locals {
  pools   = [stowage_node_pool.web_spot, stowage_node_pool.gpu_inference]
  classes = [stowage_node_class.default]
}

data "stowage_plan" "peak" {
  node_pools   = local.pools
  node_classes = local.classes

  pod {
    name          = "storefront"
    replicas      = 48
    requests      = { cpu = "1", memory = "2Gi" }
    node_selector = { tier = "web" }
    topology_spread {
      topology_key = "topology.kubernetes.io/zone"
    }
  }
  pod {
    name          = "vllm"
    replicas      = 4
    requests      = { cpu = "8", memory = "64Gi", "nvidia.com/gpu" = "4" }
    node_selector = { tier = "inference" }
    toleration {
      key      = "nvidia.com/gpu"
      operator = "Exists"
      effect   = "NoSchedule"
    }
  }

  # What if g5.12xlarge is short in us-east-1a tonight?
  unavailable = ["g5.12xlarge:us-east-1a"]
}

output "peak_cost_per_hour" {
  value = data.stowage_plan.peak.cost_per_hour
}

# Fail the plan when the policy cannot place the peak.
check "peak_fits" {
  assert {
    condition     = length(data.stowage_plan.peak.unschedulable) == 0
    error_message = "unschedulable at the peak: ${jsonencode(data.stowage_plan.peak.unschedulable)}"
  }
}
