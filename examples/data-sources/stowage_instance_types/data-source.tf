# What a GPU pool could launch, cheapest first, from the built-in catalogue.
data "stowage_instance_types" "gpu" {
  requirement {
    key      = "stowage.dev/instance-gpu-count"
    operator = "Gte"
    values   = ["4"]
  }
  requirement {
    key      = "stowage.dev/capacity-type"
    operator = "In"
    values   = ["on-demand"]
  }
}

output "cheapest_gpu_type" {
  value = data.stowage_instance_types.gpu.instance_types[0].name
}
