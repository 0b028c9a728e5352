# The controller, from the project's manifests, running as the IRSA role.
# Pools and classes that need its CRDs depend on it.
resource "stowage_controller" "this" {
  cluster_name     = "prod"
  cluster_endpoint = "https://EXAMPLED539D4633E53DE1B71EXAMPLE.gr7.us-east-1.eks.amazonaws.com"
  region           = "us-east-1"
  role_arn         = stowage_controller_role.irsa.arn

  settings = {
    "batch-idle-duration" = "2s"
    "preferences"         = "respect"
  }
}
