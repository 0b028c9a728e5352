# An interruption queue is imported by its name.
terraform import stowage_interruption_queue.prod prod-interruptions
