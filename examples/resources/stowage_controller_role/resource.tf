# With IRSA: the cluster's OIDC provider may give the role to the
# controller's service account, stowage/stowage, and nothing else.
resource "stowage_controller_role" "irsa" {
  name              = "StowageController-prod"
  policy_json       = data.stowage_controller_policy.prod.json
  oidc_provider_arn = "arn:aws:iam::111122223333:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/EXAMPLED539D4633E53DE1B71EXAMPLE"
}

# Or with EKS Pod Identity: the association for stowage/stowage is made too.
resource "stowage_controller_role" "pod_identity" {
  name                      = "StowageController-staging"
  policy_json               = data.stowage_controller_policy.prod.json
  pod_identity_cluster_name = "staging"
}
