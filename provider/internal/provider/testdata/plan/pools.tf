# The seed's pools with the provider; pools.yaml holds the same as manifests.
resource "stowage_node_class" "web" {
  name = "web"
  role = "StowageNodeRole-prod"
  ami_selector_term {
    alias = "bottlerocket@latest"
  }
  subnet_selector_term {
    tags = { "stowage.dev/discovery" = "prod" }
  }
  security_group_selector_term {
    tags = { "stowage.dev/discovery" = "prod" }
  }
}

resource "stowage_node_class" "gpu" {
  name = "gpu"
  role = "StowageNodeRole-prod"
  ami_selector_term {
    alias = "al2023@latest"
  }
  subnet_selector_term {
    tags = { "stowage.dev/discovery" = "prod" }
  }
  security_group_selector_term {
    tags = { "stowage.dev/discovery" = "prod" }
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
  labels = { tier = "web" }
  node_class_ref {
    name = stowage_node_class.web.name
  }
  requirement {
    key      = "stowage.dev/instance-family"
    operator = "In"
    values   = ["c6i", "m6i"]
  }
  requirement {
    key      = "stowage.dev/capacity-type"
    operator = "In"
    values   = ["spot"]
  }
  requirement {
    key      = "stowage.dev/instance-cpu"
    operator = "Lte"
    values   = ["16"]
  }
  limits = { cpu = "24" }
}

resource "stowage_node_pool" "web_on_demand" {
  name   = "web-on-demand"
  weight = 10
  labels = { tier = "web" }
  node_class_ref {
    name = stowage_node_class.web.name
  }
  requirement {
    key      = "stowage.dev/instance-family"
    operator = "In"
    values   = ["c6i", "m6i"]
  }
  requirement {
    key      = "stowage.dev/capacity-type"
    operator = "In"
    values   = ["on-demand"]
  }
  requirement {
    key      = "stowage.dev/instance-cpu"
    operator = "Lte"
    values   = ["16"]
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
    key      = "node.kubernetes.io/instance-type"
    operator = "In"
    values   = ["g5.12xlarge", "g5.24xlarge", "g6.12xlarge"]
  }
  requirement {
    key      = "stowage.dev/capacity-type"
    operator = "In"
    values   = ["on-demand"]
  }
  disruption {
    consolidation_policy = "WhenEmpty"
  }
}
