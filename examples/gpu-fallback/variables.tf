variable "cluster_name" {
  description = "Name of the existing EKS cluster."
  type        = string
}

variable "region" {
  description = "AWS region of the cluster."
  type        = string
  default     = "us-east-1"
}

variable "cluster_endpoint" {
  description = "The cluster's API server endpoint (aws eks describe-cluster --query cluster.endpoint)."
  type        = string
}

variable "cluster_certificate_authority_data" {
  description = "The cluster's CA, base64 PEM (aws eks describe-cluster --query cluster.certificateAuthority.data)."
  type        = string
}

variable "oidc_provider_arn" {
  description = "The cluster's IAM OIDC provider, for IRSA; null gives the controller its role through EKS Pod Identity."
  type        = string
  default     = null
}

variable "interruption_handler_architecture" {
  description = "Architecture of the interruption Lambda: arm64 (cheaper) or x86_64."
  type        = string
  default     = "arm64"
}

variable "allow_destroy_with_nodes" {
  description = "Lets terraform destroy remove the pool while it has nodes (the controller drains them first)."
  type        = bool
  default     = false
}
