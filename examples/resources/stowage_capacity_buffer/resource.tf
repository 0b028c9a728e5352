# Warm room for one more vLLM replica: Stowage keeps a node that fits one pod
# of the vllm Deployment's template (its GPUs, node selector, affinity and
# tolerations), so that the next replica starts without waiting for a GPU
# node to boot; when a real replica takes the room, Stowage provisions it again.
resource "stowage_capacity_buffer" "vllm_headroom" {
  namespace = "inference"
  name      = "vllm-headroom"
  replicas  = 1

  scalable_ref {
    api_group = "apps"
    kind      = "Deployment"
    name      = "vllm"
  }

  # The cluster must serve the CapacityBuffer CRD: stowage_controller installs
  # it where no other owner (Cluster Autoscaler, Karpenter) has.
  depends_on = [stowage_controller.this]
}

# Room for batch chunks of a PodTemplate's shape, as many as fit in 16 GPUs.
resource "stowage_capacity_buffer" "training_chunks" {
  namespace = "training"
  name      = "chunks"
  limits    = { "nvidia.com/gpu" = "16" }

  pod_template_ref {
    name = "training-chunk"
  }

  depends_on = [stowage_controller.this]
}
