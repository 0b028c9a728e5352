variable "cluster_name" {
  description = "Name of the cluster; subnets and security groups tagged stowage.dev/discovery with it are used."
  type        = string
  default     = "prod"
}

variable "node_role" {
  description = "IAM role of the nodes."
  type        = string
  default     = "StowageNodeRole-prod"
}

variable "web_labels" {
  description = "Labels of the web nodes. Changing them drifts (replaces) the running web nodes: the plan says how many."
  type        = map(string)
  default     = { tier = "web" }
}

variable "web_spot_cpu_limit" {
  description = "vCPUs the web spot pool may launch in all; below the peak's need, web spills onto on-demand and the plan's cost rises."
  type        = string
  default     = "1000"
}

variable "web_replicas" {
  description = "Web pods at tonight's peak."
  type        = number
  default     = 48
}
