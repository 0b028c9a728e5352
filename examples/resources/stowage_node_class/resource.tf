resource "stowage_node_class" "default" {
  name = "default"
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
      volume_size = "100Gi"
      volume_type = "gp3"
      encrypted   = true
    }
  }

  kubelet {
    max_pods        = 110
    system_reserved = { cpu = "100m", memory = "100Mi" }
    eviction_hard   = { "memory.available" = "5%" }
  }

  # IMDSv2 with a hop limit of 1 is the default; shown here for clarity.
  metadata_options {
    http_tokens                 = "required"
    http_put_response_hop_limit = 1
  }

  tags = { team = "platform" }
}
