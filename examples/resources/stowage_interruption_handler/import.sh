# The interruption Lambda is imported by its function's name.
terraform import stowage_interruption_handler.prod prod-interruption
