# The controller in the cluster: the CRDs, its namespace, service account,
# RBAC, Deployment, PodDisruptionBudget and metrics Service. It depends on
# its role (for Pod Identity, which names no ARN, too): the role and its
# association come first and go last, so that on destroy the controller
# still holds its permissions while it drains the pools' nodes.
resource "stowage_controller" "this" {
  cluster_name        = var.cluster_name
  cluster_endpoint    = var.cluster_endpoint
  cluster_ca_bundle   = var.cluster_certificate_authority_data
  cluster_cidr        = var.cluster_service_cidr
  region              = var.region
  role_arn            = var.enable_irsa ? stowage_controller_role.this.arn : null
  namespace           = var.namespace
  service_account     = var.service_account
  image               = var.controller.image
  image_pull_policy   = var.controller.image_pull_policy
  replicas            = var.controller.replicas
  log_level           = var.controller.log_level
  log_format          = var.controller.log_format
  settings            = length(var.controller.settings) > 0 ? var.controller.settings : null
  cpu_request         = var.controller.cpu_request
  memory_request      = var.controller.memory_request
  memory_limit        = var.controller.memory_limit
  destroy_node_claims = var.destroy_node_claims

  depends_on = [stowage_controller_role.this]
}
