# Stowage's capacity policy for one cluster, as the seed describes it: web on
# spot first with an on-demand fallback, and GPU inference on diversified
# on-demand types. The plan shows, before anything is applied, what the policy
# costs for tonight's expected workload and whether anything cannot be placed.
#
#   terraform init && terraform plan && terraform apply
#   terraform plan -var web_spot_cpu_limit=16   # the cost rises: web spills onto on-demand
terraform {
  required_version = ">= 1.5.0"
  required_providers {
    stowage = {
      source = "stowage-dev/stowage"
    }
  }
}

# The cluster comes from KUBE_CONFIG_PATH (or set kubeconfig_path, host, or
# eks_cluster_name here).
provider "stowage" {}

resource "stowage_node_class" "web" {
  name = "web"
  role = var.node_role
  ami_selector_term {
    alias = "bottlerocket@latest"
  }
  subnet_selector_term {
    tags = { "stowage.dev/discovery" = var.cluster_name }
  }
  security_group_selector_term {
    tags = { "stowage.dev/discovery" = var.cluster_name }
  }
}

resource "stowage_node_class" "gpu" {
  name = "gpu"
  role = var.node_role
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

resource "stowage_node_pool" "web_spot" {
  name   = "web-spot"
  weight = 100
  labels = var.web_labels
  node_class_ref {
    name = stowage_node_class.web.name
  }
  requirement {
    key      = "stowage.dev/instance-family"
    operator = "In"
    values   = ["c6i", "m6i", "c7i", "m7i"]
  }
  requirement {
    key      = "stowage.dev/capacity-type"
    operator = "In"
    values   = ["spot"]
  }
  limits = { cpu = var.web_spot_cpu_limit }
  disruption {
    budget {
      nodes = "10%"
    }
    budget {
      nodes    = "0"
      schedule = "0 9 * * 1-5"
      duration = "8h"
      reasons  = ["Drifted", "Underutilized"]
    }
  }
}

resource "stowage_node_pool" "web_on_demand" {
  name   = "web-on-demand"
  weight = 10
  labels = var.web_labels
  node_class_ref {
    name = stowage_node_class.web.name
  }
  requirement {
    key      = "stowage.dev/instance-family"
    operator = "In"
    values   = ["c6i", "m6i", "c7i", "m7i"]
  }
  requirement {
    key      = "stowage.dev/capacity-type"
    operator = "In"
    values   = ["on-demand"]
  }
}

resource "stowage_node_pool" "gpu_inference" {
  name   = "gpu-inference"
  weight = 50
  labels = { tier = "inference" }
  node_class_ref {
    name = stowage_node_class.gpu.name
  }
  taint {
    key    = "dedicated"
    value  = "gpu"
    effect = "NoSchedule"
  }
  requirement {
    key        = "node.kubernetes.io/instance-type"
    operator   = "In"
    values     = ["g5.12xlarge", "g5.24xlarge", "g6.12xlarge"]
    min_values = 2
  }
  requirement {
    key      = "stowage.dev/capacity-type"
    operator = "In"
    values   = ["on-demand"]
  }
  limits = { "nvidia.com/gpu" = "64" }
  disruption {
    consolidation_policy = "WhenEmpty"
  }
}

# The pools and classes as planned. Through a local, the plan data source reads
# their planned values during `terraform plan`; a direct reference would make
# Terraform wait for them to be applied.
locals {
  pools   = [stowage_node_pool.web_spot, stowage_node_pool.web_on_demand, stowage_node_pool.gpu_inference]
  classes = [stowage_node_class.web, stowage_node_class.gpu]
}

# Tonight's expected peak: what the policy launches for it, and what it costs.
data "stowage_plan" "peak" {
  node_pools   = local.pools
  node_classes = local.classes

  pod {
    name          = "storefront"
    replicas      = var.web_replicas
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
      key    = "dedicated"
      value  = "gpu"
      effect = "NoSchedule"
    }
  }
}

check "peak_fits" {
  assert {
    condition     = length(data.stowage_plan.peak.unschedulable) == 0
    error_message = "the policy cannot place every pod of the peak: ${join("; ", [for u in data.stowage_plan.peak.unschedulable : "${u.pod}: ${u.reason}"])}"
  }
}
