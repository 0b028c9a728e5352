terraform {
  required_version = ">= 1.5.0"
  required_providers {
    stowage = {
      source = "stowage-dev/stowage"
    }
  }
}

# The provider reaches the cluster as EKS does: a token minted from the AWS
# credentials, the endpoint and CA from eks:DescribeCluster.
provider "stowage" {
  aws_region       = var.region
  eks_cluster_name = var.cluster_name
}
