# A NodeClass is imported by its name.
terraform import stowage_node_class.default default
