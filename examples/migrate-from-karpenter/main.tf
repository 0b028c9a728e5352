# Moving the seed's Karpenter policy (karpenter.yaml) under Terraform with
# Stowage's provider. pools.tf is written by the converter, not by hand:
#
#   stowage import karpenter karpenter.yaml | kubectl apply -f -
#   stowage import karpenter --format hcl karpenter.yaml > pools.tf
#   terraform init && terraform apply     # 5 to import, 0 to add, 0 to change
#
# Stowage must be installed in the cluster first (modules/stowage, or
# examples/complete).
terraform {
  required_version = ">= 1.5.0"
  required_providers {
    stowage = {
      source = "stowage-dev/stowage"
    }
  }
}

variable "cluster_name" {
  description = "Name of the EKS cluster the pools run in."
  type        = string
}

variable "region" {
  description = "AWS region of the cluster."
  type        = string
  default     = "us-east-1"
}

provider "stowage" {
  aws_region       = var.region
  eks_cluster_name = var.cluster_name
}
