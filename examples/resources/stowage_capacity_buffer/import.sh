# A CapacityBuffer is imported by its namespace and name.
terraform import stowage_capacity_buffer.vllm_headroom inference/vllm-headroom
