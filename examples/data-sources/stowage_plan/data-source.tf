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

# An output's precondition fails the plan (an error, nothing applied) when
# the policy cannot place the peak. (A postcondition in the data source's
# lifecycle would make Terraform read it only during apply, once the pools
# exist: too late to stop the change.)
output "peak_cost_per_hour" {
  value = data.stowage_plan.peak.cost_per_hour
  precondition {
    condition     = length(data.stowage_plan.peak.unschedulable) == 0
    error_message = "unschedulable at the peak: ${jsonencode(data.stowage_plan.peak.unschedulable)}"
  }
}

# Pods a higher-weight pool could not take, with why (the plan also prints
# them as warnings).
output "peak_fallbacks" {
  value = data.stowage_plan.peak.fallbacks
}

# A check block only warns: the plan prints the failed assertion and
# succeeds. Use it for what should be looked at, not what must stop a change.
check "peak_cost" {
  assert {
    condition     = data.stowage_plan.peak.cost_per_hour < 40
    error_message = "the peak costs ${data.stowage_plan.peak.cost_per_hour} $/h, more than the 40 $/h budgeted"
  }
}
