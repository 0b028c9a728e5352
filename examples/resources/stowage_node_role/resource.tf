# The role Stowage's nodes run as, with its instance profile and the managed
# policies a node needs; node classes name it in their role.
resource "stowage_node_role" "nodes" {
  name = "StowageNodeRole-prod"
  tags = { cluster = "prod" }
}
