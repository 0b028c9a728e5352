# Everything Stowage needs in one cluster, from the stowage provider alone:
# the nodes' role, the controller's role with the policy generated for the
# cluster and its pools, the interruption path (interruption.tf) and the
# controller in the cluster (controller.tf).

locals {
  iam_role_name      = coalesce(var.iam_role_name, "StowageController-${var.cluster_name}")
  node_iam_role_name = coalesce(var.node_iam_role_name, "StowageNodeRole-${var.cluster_name}")

  # An empty map is passed as null, as the provider reads no tags back.
  tags           = length(var.tags) > 0 ? var.tags : null
  iam_role_tags  = length(merge(var.tags, var.iam_role_tags)) > 0 ? merge(var.tags, var.iam_role_tags) : null
  node_role_tags = length(merge(var.tags, var.node_iam_role_tags)) > 0 ? merge(var.tags, var.node_iam_role_tags) : null

  # The managed policies a node needs (the provider's default when nothing
  # is changed), without the CNI's when the VPC CNI has its own role.
  node_policies = concat([
    "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
    "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly",
    "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore",
  ], var.node_iam_role_attach_cni_policy ? ["arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy"] : [], values(var.node_iam_role_additional_policies))
  node_policies_changed = !var.node_iam_role_attach_cni_policy || length(var.node_iam_role_additional_policies) > 0
}

resource "stowage_node_role" "this" {
  name        = local.node_iam_role_name
  path        = var.node_iam_role_path
  description = var.node_iam_role_description
  policy_arns = local.node_policies_changed ? toset(local.node_policies) : null
  tags        = local.node_role_tags
}

# Generated during the plan from the calls the controller makes, scoped to
# this cluster, region and node role, and to the pools' instance types.
data "stowage_controller_policy" "this" {
  cluster_name   = var.cluster_name
  region         = var.region
  node_role_arns = [stowage_node_role.this.arn]
  node_pools     = var.node_pools
  instance_types = length(var.instance_types) > 0 ? var.instance_types : null
}

resource "stowage_controller_role" "this" {
  name                 = local.iam_role_name
  path                 = var.iam_role_path
  description          = var.iam_role_description
  max_session_duration = var.iam_role_max_session_duration
  tags                 = local.iam_role_tags
  policy_json          = data.stowage_controller_policy.this.json

  namespace                 = var.namespace
  service_account           = var.service_account
  oidc_provider_arn         = var.enable_irsa ? var.irsa_oidc_provider_arn : null
  pod_identity_cluster_name = var.enable_pod_identity ? var.cluster_name : null

  lifecycle {
    precondition {
      condition     = var.enable_irsa != var.enable_pod_identity
      error_message = "Set exactly one of enable_pod_identity (the default) and enable_irsa: the controller's role is trusted by EKS Pod Identity or by the cluster's OIDC provider."
    }
    precondition {
      condition     = !var.enable_irsa || var.irsa_oidc_provider_arn != null
      error_message = "enable_irsa needs irsa_oidc_provider_arn, the ARN of the cluster's IAM OIDC provider (terraform-aws-eks's oidc_provider_arn output)."
    }
  }
}

resource "stowage_spot_service_linked_role" "this" {
  count = var.create_spot_service_linked_role ? 1 : 0
}
