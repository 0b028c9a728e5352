# From a kubeconfig (or KUBE_CONFIG_PATH):
provider "stowage" {
  kubeconfig_path    = "~/.kube/config"
  kubeconfig_context = "prod"
}

# Or an EKS cluster: the token is minted from the AWS credentials, and the
# endpoint and CA come from eks:DescribeCluster.
provider "stowage" {
  alias            = "eks"
  eks_cluster_name = "prod"
  aws_region       = "us-east-1"
}
