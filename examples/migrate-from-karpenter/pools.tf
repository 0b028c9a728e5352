
# Converted from karpenter.k8s.aws/v1 EC2NodeClass web (karpenter.yaml:7) by stowage import karpenter.
# metadata: not converted: annotations[karpenter.k8s.aws/ec2nodeclass-hash-version], annotations[karpenter.k8s.aws/ec2nodeclass-hash], creationTimestamp, finalizers, generation, resourceVersion, uid, set by the API server, kubectl or Karpenter for the old object
resource "stowage_node_class" "web" {
  name = "web"
  ami_selector_term {
    alias = "bottlerocket@latest"
  }
  metadata_options {
    http_endpoint               = "enabled"
    http_protocol_ipv6          = "disabled"
    http_put_response_hop_limit = 1
    http_tokens                 = "required"
  }
  role = "KarpenterNodeRole-prod"
  security_group_selector_term {
    tags = {
      "karpenter.sh/discovery" = "prod"
    }
  }
  subnet_selector_term {
    tags = {
      "karpenter.sh/discovery" = "prod"
    }
  }
}

import {
  to = stowage_node_class.web
  id = "web"
}

# Converted from karpenter.k8s.aws/v1 EC2NodeClass gpu (karpenter.yaml:35) by stowage import karpenter.
# metadata: not converted: creationTimestamp, generation, resourceVersion, uid, set by the API server, kubectl or Karpenter for the old object
resource "stowage_node_class" "gpu" {
  name = "gpu"
  ami_selector_term {
    alias = "al2023@latest"
  }
  block_device_mapping {
    device_name = "/dev/xvda"
    ebs {
      encrypted   = true
      volume_size = "200Gi"
      volume_type = "gp3"
    }
    root_volume = true
  }
  metadata_options {
    http_endpoint               = "enabled"
    http_protocol_ipv6          = "disabled"
    http_put_response_hop_limit = 1
    http_tokens                 = "required"
  }
  role = "KarpenterNodeRole-prod"
  security_group_selector_term {
    tags = {
      "karpenter.sh/discovery" = "prod"
    }
  }
  subnet_selector_term {
    tags = {
      "karpenter.sh/discovery" = "prod"
    }
  }
}

import {
  to = stowage_node_class.gpu
  id = "gpu"
}

# Converted from karpenter.sh/v1 NodePool web-spot (karpenter.yaml:60) by stowage import karpenter.
# metadata: not converted: creationTimestamp, generation, resourceVersion, uid, set by the API server, kubectl or Karpenter for the old object
# spec.capacityBlockLeadTime = "60m": left out: the API server gives it this value when it is absent
resource "stowage_node_pool" "web_spot" {
  name = "web-spot"
  disruption {
    budget {
      nodes = "10%"
    }
    budget {
      duration = "8h0m0s"
      nodes    = "0"
      reasons  = ["Drifted", "Underutilized"]
      schedule = "0 9 * * 1-5"
    }
    consolidate_after    = "5m0s"
    consolidation_policy = "WhenEmptyOrUnderutilized"
    repair_after         = "30m"
    return_after         = "10m"
  }
  limits = {
    "cpu"    = "1k"
    "memory" = "4000Gi"
  }
  labels = {
    "tier" = "web"
  }
  expire_after = "720h0m0s"
  node_class_ref {
    group = "stowage.dev"
    kind  = "NodeClass"
    name  = "web"
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
  weight = 100
}

import {
  to = stowage_node_pool.web_spot
  id = "web-spot"
}

# Converted from karpenter.sh/v1 NodePool web-on-demand (karpenter.yaml:92) by stowage import karpenter.
# metadata: not converted: creationTimestamp, generation, resourceVersion, uid, set by the API server, kubectl or Karpenter for the old object
# spec.capacityBlockLeadTime = "60m": left out: the API server gives it this value when it is absent
# spec.template.spec.expireAfter = "720h": left out: the API server gives it this value when it is absent
resource "stowage_node_pool" "web_on_demand" {
  name = "web-on-demand"
  disruption {
    budget {
      nodes = "10%"
    }
    consolidate_after    = "5m0s"
    consolidation_policy = "WhenEmptyOrUnderutilized"
    repair_after         = "30m"
    return_after         = "10m"
  }
  labels = {
    "tier" = "web"
  }
  node_class_ref {
    group = "stowage.dev"
    kind  = "NodeClass"
    name  = "web"
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
  weight = 10
}

import {
  to = stowage_node_pool.web_on_demand
  id = "web-on-demand"
}

# Converted from karpenter.sh/v1 NodePool gpu-inference (karpenter.yaml:114) by stowage import karpenter.
# metadata: not converted: creationTimestamp, generation, resourceVersion, uid, set by the API server, kubectl or Karpenter for the old object
# spec.capacityBlockLeadTime = "60m": left out: the API server gives it this value when it is absent
# spec.template.spec.expireAfter = "720h": left out: the API server gives it this value when it is absent
resource "stowage_node_pool" "gpu_inference" {
  name = "gpu-inference"
  disruption {
    budget {
      nodes = "10%"
    }
    consolidate_after    = "0s"
    consolidation_policy = "WhenEmpty"
    repair_after         = "30m"
    return_after         = "10m"
  }
  limits = {
    "nvidia.com/gpu" = "64"
  }
  labels = {
    "tier" = "inference"
  }
  node_class_ref {
    group = "stowage.dev"
    kind  = "NodeClass"
    name  = "gpu"
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
  taint {
    effect = "NoSchedule"
    key    = "nvidia.com/gpu"
    value  = "true"
  }
  weight = 50
}

import {
  to = stowage_node_pool.gpu_inference
  id = "gpu-inference"
}
