# An account that has never run spot: make the role EC2 needs for spot launches,
# which Stowage's controller may not create itself.
resource "stowage_spot_service_linked_role" "this" {}
