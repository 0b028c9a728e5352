# A node role is imported by its name.
terraform import stowage_node_role.nodes StowageNodeRole-prod
