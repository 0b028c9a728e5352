# The queue EventBridge delivers AWS's interruption warnings to, for the
# interruption Lambda: five minutes' retention, a dead-letter queue after
# five failed deliveries, one rule per kind of warning.
resource "stowage_interruption_queue" "prod" {
  name = "prod-interruptions"
  tags = { cluster = "prod" }
}
