locals {
  queue_name       = coalesce(var.queue_name, "stowage-${var.cluster_name}")
  rule_name_prefix = coalesce(var.rule_name_prefix, substr("stowage-${var.cluster_name}", 0, 30))
  handler_name     = coalesce(var.interruption_handler_name, "stowage-${var.cluster_name}-interruption")
}

# AWS's warnings reach the queue through one EventBridge rule per kind; only
# those rules may send to it, and only over TLS.
resource "stowage_interruption_queue" "this" {
  count = var.enable_spot_termination ? 1 : 0

  name                      = local.queue_name
  rule_name_prefix          = local.rule_name_prefix
  message_retention_seconds = var.queue_message_retention_seconds
  max_receive_count         = var.queue_max_receive_count
  kms_master_key_id         = var.queue_kms_master_key_id
  tags                      = local.tags
}

# The Lambda reads the queue through its event source mapping and marks the
# Nodes the warnings name, as its own role, mapped into the cluster by its
# access entry; the controller replaces a marked Node.
resource "stowage_interruption_handler" "this" {
  count = var.enable_spot_termination ? 1 : 0

  name                     = local.handler_name
  queue_arn                = stowage_interruption_queue.this[0].arn
  cluster_name             = var.cluster_name
  cluster_endpoint         = var.cluster_endpoint
  cluster_ca_data          = var.cluster_certificate_authority_data
  architecture             = var.interruption_handler_architecture
  rebalance_recommendation = var.interruption_handler_rebalance_recommendation
  log_retention_days       = var.interruption_handler_log_retention_days
  subnet_ids               = length(var.interruption_handler_subnet_ids) > 0 ? toset(var.interruption_handler_subnet_ids) : null
  security_group_ids       = length(var.interruption_handler_security_group_ids) > 0 ? toset(var.interruption_handler_security_group_ids) : null
  tags                     = local.tags

  lifecycle {
    precondition {
      condition     = (length(var.interruption_handler_subnet_ids) > 0) == (length(var.interruption_handler_security_group_ids) > 0)
      error_message = "interruption_handler_subnet_ids and interruption_handler_security_group_ids go together: set both (a cluster whose endpoint is private), or neither."
    }
  }
}
