# The interruption Lambda, from the code this provider embeds: it reads the
# queue's warnings and marks the Nodes they name, as its own IAM role, which
# the access entry maps to the Lambda's ClusterRole in the cluster.
resource "stowage_interruption_handler" "prod" {
  name             = "prod-interruption"
  queue_arn        = stowage_interruption_queue.prod.arn
  cluster_name     = "prod"
  cluster_endpoint = "https://EXAMPLED539D4633E53DE1B71EXAMPLE.gr7.us-east-1.eks.amazonaws.com"
  cluster_ca_data  = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJkekNDQVIyZ0F3SUJBZ0lCQURBS0JnZ3Foa2pPUFFRREFqQWpNU0V3SHdZRFZRUURE"

  # The cluster's endpoint is private: the function runs in its VPC.
  subnet_ids         = ["subnet-0a1b2c3d4e5f60001", "subnet-0a1b2c3d4e5f60002"]
  security_group_ids = ["sg-0a1b2c3d4e5f60001"]
}
