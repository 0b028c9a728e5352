# The controller is imported by its namespace.
terraform import stowage_controller.this stowage
