# A NodePool is imported by its name.
terraform import stowage_node_pool.web_spot web-spot
