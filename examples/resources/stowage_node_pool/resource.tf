# Web on spot, across four families, with an on-demand pool as its fallback
# (a lower weight), and no voluntary disruption during business hours.
resource "stowage_node_pool" "web_spot" {
  name   = "web-spot"
  weight = 100
  labels = { tier = "web" }

  node_class_ref {
    name = stowage_node_class.default.name
  }

  # min_values keeps at least two families in every launch's fallback list.
  # (Not on the zone: a zone topology spread puts each new node in one zone,
  # so min_values on topology.kubernetes.io/zone would leave such pods
  # unschedulable on this pool.)
  requirement {
    key        = "stowage.dev/instance-family"
    operator   = "In"
    values     = ["c6i", "m6i", "c7i", "m7i"]
    min_values = 2
  }
  requirement {
    key      = "stowage.dev/capacity-type"
    operator = "In"
    values   = ["spot"]
  }
  requirement {
    key      = "topology.kubernetes.io/zone"
    operator = "In"
    values   = ["us-east-1a", "us-east-1b", "us-east-1c"]
  }

  limits       = { cpu = "1000", memory = "4000Gi" }
  expire_after = "720h"

  disruption {
    consolidation_policy = "WhenEmptyOrUnderutilized"
    consolidate_after    = "5m"
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

# GPU inference: diversified types, tainted for the GPU workloads only,
# consolidated only when empty. Filler pods (a negative priority) use the
# room its GPU nodes have left but never launch one.
resource "stowage_node_pool" "gpu_inference" {
  name             = "gpu-inference"
  weight           = 50
  labels           = { tier = "inference" }
  min_pod_priority = 0

  node_class_ref {
    name = stowage_node_class.default.name
  }

  taint {
    key    = "nvidia.com/gpu"
    value  = "true"
    effect = "NoSchedule"
  }
  startup_taint {
    key    = "example.com/gpu-driver-not-ready"
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
