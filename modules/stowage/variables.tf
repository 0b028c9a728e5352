variable "cluster_name" {
  description = "Name of the EKS cluster. The controller tags what it launches `kubernetes.io/cluster/<cluster_name>`, its IAM policy allows nothing else, and the default names of the roles, the queue and the Lambda end with it."
  type        = string
  validation {
    condition     = can(regex("^[0-9A-Za-z][0-9A-Za-z_-]{0,99}$", var.cluster_name))
    error_message = "cluster_name must be an EKS cluster name: 1 to 100 letters, digits, '-' or '_', starting with a letter or digit."
  }
}

variable "cluster_endpoint" {
  description = "The cluster's API server endpoint (terraform-aws-eks's `cluster_endpoint` output, or `aws eks describe-cluster --query cluster.endpoint`): the nodes join it, and the interruption Lambda marks Nodes through it."
  type        = string
  validation {
    condition     = can(regex("^https://[^/]+$", var.cluster_endpoint))
    error_message = "cluster_endpoint must be the API server's https URL with no path, such as https://EXAMPLE0123.gr7.us-east-1.eks.amazonaws.com."
  }
}

variable "cluster_certificate_authority_data" {
  description = "The cluster's CA, base64 PEM, as EKS gives it (terraform-aws-eks's `cluster_certificate_authority_data` output, or `certificateAuthority.data`)."
  type        = string
  validation {
    condition     = can(regex("-----BEGIN CERTIFICATE-----", base64decode(var.cluster_certificate_authority_data)))
    error_message = "cluster_certificate_authority_data must be a base64-encoded PEM certificate, as EKS's certificateAuthority.data (not the PEM itself)."
  }
}

variable "cluster_service_cidr" {
  description = "The cluster's service CIDR (terraform-aws-eks's `cluster_service_cidr` output, or `kubernetesNetworkConfig.serviceIpv4Cidr`; `serviceIpv6Cidr` on an IPv6 cluster): nodes derive their cluster DNS from it. When null, the controller reads it from `eks:DescribeCluster` when it starts."
  type        = string
  default     = null
  validation {
    condition     = var.cluster_service_cidr == null || can(cidrhost(var.cluster_service_cidr, 0))
    error_message = "cluster_service_cidr must be a CIDR such as 10.100.0.0/16 (or fd00:10:96::/108 on an IPv6 cluster), or null to read it from eks:DescribeCluster."
  }
}

variable "region" {
  description = "AWS region of the cluster; the provider's `aws_region` when null."
  type        = string
  default     = null
  validation {
    condition     = var.region == null || can(regex("^[a-z]{2}(-[a-z]+)+-[0-9]$", var.region))
    error_message = "region must be a region name such as us-east-1, or null for the provider's."
  }
}

variable "tags" {
  description = "Tags put on every AWS resource the module makes (roles, instance profile, queues, rules, the Lambda's log group), beneath the more specific `*_tags`."
  type        = map(string)
  default     = {}
  nullable    = false
}

# The controller's identity.

variable "enable_pod_identity" {
  description = "Gives the controller its role through EKS Pod Identity: the role trusts `pods.eks.amazonaws.com`, and the association for `namespace`/`service_account` is made. The cluster needs the eks-pod-identity-agent add-on. Set it or `enable_irsa`, not both."
  type        = bool
  default     = true
  nullable    = false
}

variable "enable_irsa" {
  description = "Gives the controller its role through IRSA instead: the role trusts the cluster's OIDC provider (`irsa_oidc_provider_arn`) for `system:serviceaccount:<namespace>:<service_account>` only, and the service account is annotated with it. Set it or `enable_pod_identity`, not both."
  type        = bool
  default     = false
  nullable    = false
}

variable "irsa_oidc_provider_arn" {
  description = "With `enable_irsa`: the ARN of the cluster's IAM OIDC provider (terraform-aws-eks's `oidc_provider_arn` output)."
  type        = string
  default     = null
  validation {
    condition     = var.irsa_oidc_provider_arn == null || can(regex("^arn:aws[a-z-]*:iam::[0-9]{12}:oidc-provider/.+$", var.irsa_oidc_provider_arn))
    error_message = "irsa_oidc_provider_arn must be an IAM OIDC provider ARN: arn:aws:iam::<account>:oidc-provider/oidc.eks.<region>.amazonaws.com/id/<id>."
  }
}

variable "namespace" {
  description = "Namespace the controller runs in, made with it and deleted with it (so one of its own: not `default` or a `kube-` namespace)."
  type        = string
  default     = "stowage"
  nullable    = false
  validation {
    condition     = can(regex("^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$", var.namespace)) && var.namespace != "default" && !startswith(var.namespace, "kube-")
    error_message = "namespace must be a namespace name (lower-case letters, digits and '-', at most 63) of the controller's own, not default or kube-*: destroying the module deletes it."
  }
}

variable "service_account" {
  description = "The controller's service account, which the IAM role trusts (IRSA) or is associated with (Pod Identity)."
  type        = string
  default     = "stowage"
  nullable    = false
  validation {
    condition     = can(regex("^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$", var.service_account))
    error_message = "service_account must be a service account name: lower-case letters, digits, '-' and '.'."
  }
}

variable "iam_role_name" {
  description = "Name of the controller's IAM role; `StowageController-<cluster_name>` when null."
  type        = string
  default     = null
  validation {
    condition     = var.iam_role_name == null || can(regex("^[\\w+=,.@-]{1,64}$", var.iam_role_name))
    error_message = "iam_role_name must be an IAM role name: 1 to 64 letters, digits or +=,.@_-."
  }
}

variable "iam_role_path" {
  description = "IAM path of the controller's role."
  type        = string
  default     = "/"
  nullable    = false
  validation {
    condition     = can(regex("^/([\\w+=,.@-]+/)*$", var.iam_role_path))
    error_message = "iam_role_path must start and end with '/', such as / or /platform/."
  }
}

variable "iam_role_description" {
  description = "Description of the controller's IAM role."
  type        = string
  default     = "Stowage's controller: launches and terminates the cluster's nodes"
}

variable "iam_role_max_session_duration" {
  description = "Longest session of the controller's role, in seconds; IAM's 3600 when null."
  type        = number
  default     = null
  validation {
    condition     = var.iam_role_max_session_duration == null || try(var.iam_role_max_session_duration >= 3600 && var.iam_role_max_session_duration <= 43200, false)
    error_message = "iam_role_max_session_duration must be from 3600 to 43200 seconds."
  }
}

variable "iam_role_tags" {
  description = "Tags of the controller's role, beside `tags`."
  type        = map(string)
  default     = {}
  nullable    = false
}

# What the controller may launch.

variable "node_pools" {
  description = <<-EOT
    The pools the controller launches for, each its `name` and its `requirement`s (the `node-pools` module's
    `policy_node_pools` output, or a local the pool resources are made from): the generated policy lets it launch only
    instances tagged for one of them, of the instance types they allow. Build it from values, not from the pool
    resources: the pools depend on the controller, and a policy that referred to them would make the controller's role
    go first on destroy, before the pools' nodes are drained. Null lets it launch for any pool, any type.
  EOT
  type = list(object({
    name = string
    requirement = list(object({
      key        = string
      operator   = string
      values     = optional(list(string))
      min_values = optional(number)
    }))
  }))
  default = null
  validation {
    condition     = var.node_pools == null || alltrue([for p in coalesce(var.node_pools, []) : can(regex("^[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?$", p.name))])
    error_message = "node_pools[*].name must be NodePool names: lower-case letters, digits, '-' and '.', at most 63."
  }
  validation {
    condition     = var.node_pools == null || alltrue(flatten([for p in coalesce(var.node_pools, []) : [for r in p.requirement : contains(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte"], r.operator)]]))
    error_message = "node_pools[*].requirement[*].operator must be In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte or Lte."
  }
}

variable "instance_types" {
  description = "More instance types the controller may launch, beside those `node_pools` allow."
  type        = list(string)
  default     = []
  nullable    = false
  validation {
    condition     = alltrue([for t in var.instance_types : can(regex("^[a-z0-9-]+\\.[a-z0-9-]+$", t))])
    error_message = "instance_types must be instance type names such as m6i.large."
  }
}

# The nodes' role.

variable "node_iam_role_name" {
  description = "Name of the nodes' IAM role and of its instance profile; `StowageNodeRole-<cluster_name>` when null. Node classes name it in `role` (the `node_iam_role_name` output)."
  type        = string
  default     = null
  validation {
    condition     = var.node_iam_role_name == null || can(regex("^[\\w+=,.@-]{1,64}$", var.node_iam_role_name))
    error_message = "node_iam_role_name must be an IAM role name: 1 to 64 letters, digits or +=,.@_-."
  }
}

variable "node_iam_role_path" {
  description = "IAM path of the nodes' role and instance profile."
  type        = string
  default     = "/"
  nullable    = false
  validation {
    condition     = can(regex("^/([\\w+=,.@-]+/)*$", var.node_iam_role_path))
    error_message = "node_iam_role_path must start and end with '/', such as / or /nodes/."
  }
}

variable "node_iam_role_description" {
  description = "Description of the nodes' role."
  type        = string
  default     = null
}

variable "node_iam_role_attach_cni_policy" {
  description = "Attaches `AmazonEKS_CNI_Policy` to the nodes' role. Turn it off when the VPC CNI has its own role (IRSA or Pod Identity on aws-node); then the nodes cannot give pods addresses without it."
  type        = bool
  default     = true
  nullable    = false
}

variable "node_iam_role_additional_policies" {
  description = "More managed policies for the nodes' role, by a name of your choosing: `{ ssm_extra = \"arn:aws:iam::aws:policy/...\" }`."
  type        = map(string)
  default     = {}
  nullable    = false
  validation {
    condition     = alltrue([for arn in values(var.node_iam_role_additional_policies) : can(regex("^arn:aws[a-z-]*:iam::(aws|[0-9]{12}):policy/.+$", arn))])
    error_message = "node_iam_role_additional_policies must map names to managed policy ARNs such as arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore."
  }
}

variable "node_iam_role_tags" {
  description = "Tags of the nodes' role and instance profile, beside `tags`."
  type        = map(string)
  default     = {}
  nullable    = false
}

# The interruption path.

variable "enable_spot_termination" {
  description = "Deploys the interruption path: the queue, its EventBridge rules (spot interruptions, rebalance recommendations, scheduled changes, instance state changes, capacity reservation interruptions) and the Lambda that marks the Nodes they name, so that the controller replaces a node before AWS takes it."
  type        = bool
  default     = true
  nullable    = false
}

variable "queue_name" {
  description = "Name of the interruption queue (the dead-letter queue is `<queue_name>-dlq`); `stowage-<cluster_name>` when null."
  type        = string
  default     = null
  validation {
    condition     = var.queue_name == null || can(regex("^[A-Za-z0-9_-]{1,76}$", var.queue_name))
    error_message = "queue_name must be 1 to 76 letters, digits, '-' or '_' (the dead-letter queue adds -dlq, within SQS's 80)."
  }
}

variable "queue_message_retention_seconds" {
  description = "How long a warning waits in the queue. A warning older than its notice (two minutes for a spot interruption) is of no use, so 300 seconds by default."
  type        = number
  default     = 300
  nullable    = false
  validation {
    condition     = var.queue_message_retention_seconds >= 60 && var.queue_message_retention_seconds <= 1209600
    error_message = "queue_message_retention_seconds must be from 60 (a minute) to 1209600 (14 days), as SQS allows."
  }
}

variable "queue_kms_master_key_id" {
  description = "KMS key encrypting both queues (SSE-KMS); SQS-managed encryption when null. The key's policy must let events.amazonaws.com use it."
  type        = string
  default     = null
}

variable "queue_max_receive_count" {
  description = "Deliveries of a message before it goes to the dead-letter queue."
  type        = number
  default     = 5
  nullable    = false
  validation {
    condition     = var.queue_max_receive_count >= 1 && var.queue_max_receive_count <= 1000
    error_message = "queue_max_receive_count must be from 1 to 1000."
  }
}

variable "rule_name_prefix" {
  description = "Prefix of the EventBridge rules' names (`<prefix>-spot-interruption`, ...); the first 30 characters of `stowage-<cluster_name>` when null."
  type        = string
  default     = null
  validation {
    condition     = var.rule_name_prefix == null || can(regex("^[A-Za-z0-9_-]{1,30}$", var.rule_name_prefix))
    error_message = "rule_name_prefix must be 1 to 30 letters, digits, '-' or '_', so that every rule's name fits EventBridge's 64."
  }
}

variable "interruption_handler_name" {
  description = "Name of the interruption Lambda and of its role; `stowage-<cluster_name>-interruption` when null."
  type        = string
  default     = null
  validation {
    condition     = var.interruption_handler_name == null || can(regex("^[A-Za-z0-9_-]{1,64}$", var.interruption_handler_name))
    error_message = "interruption_handler_name must be 1 to 64 letters, digits, '-' or '_'."
  }
}

variable "interruption_handler_architecture" {
  description = "Architecture of the interruption Lambda: `arm64` (cheaper) or `x86_64`."
  type        = string
  default     = "arm64"
  nullable    = false
  validation {
    condition     = contains(["arm64", "x86_64"], var.interruption_handler_architecture)
    error_message = "interruption_handler_architecture must be arm64 or x86_64."
  }
}

variable "interruption_handler_log_retention_days" {
  description = "Days the Lambda's log group keeps its logs."
  type        = number
  default     = 14
  nullable    = false
  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.interruption_handler_log_retention_days)
    error_message = "interruption_handler_log_retention_days must be one of CloudWatch Logs' retentions: 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288 or 3653."
  }
}

variable "interruption_handler_rebalance_recommendation" {
  description = "What a rebalance recommendation does: `ignore` it, or `mark` the Node for replacement as a spot interruption does."
  type        = string
  default     = "ignore"
  nullable    = false
  validation {
    condition     = contains(["ignore", "mark"], var.interruption_handler_rebalance_recommendation)
    error_message = "interruption_handler_rebalance_recommendation must be ignore or mark."
  }
}

variable "interruption_handler_subnet_ids" {
  description = "Subnets the Lambda runs in, for a cluster whose endpoint is private (with `interruption_handler_security_group_ids`); outside any VPC when empty."
  type        = list(string)
  default     = []
  nullable    = false
  validation {
    condition     = alltrue([for s in var.interruption_handler_subnet_ids : can(regex("^subnet-[0-9a-f]{8,17}$", s))])
    error_message = "interruption_handler_subnet_ids must be subnet ids such as subnet-0a1b2c3d4e5f60001."
  }
}

variable "interruption_handler_security_group_ids" {
  description = "Security groups of the Lambda in the VPC, with `interruption_handler_subnet_ids`; they must reach the cluster's endpoint."
  type        = list(string)
  default     = []
  nullable    = false
  validation {
    condition     = alltrue([for g in var.interruption_handler_security_group_ids : can(regex("^sg-[0-9a-f]{8,17}$", g))])
    error_message = "interruption_handler_security_group_ids must be security group ids such as sg-0a1b2c3d4e5f60001."
  }
}

# The controller in the cluster.

variable "controller" {
  description = <<-EOT
    The controller's Deployment: its image (this provider's release by default), replicas (two, one leading), log
    level and format, resources, and more `stowage run` flags in `settings` (`stowage run -h` lists them), such as
    `{ "batch-idle-duration" = "2s" }`.
  EOT
  type = object({
    image             = optional(string)
    image_pull_policy = optional(string)
    replicas          = optional(number, 2)
    log_level         = optional(string, "info")
    log_format        = optional(string, "json")
    settings          = optional(map(string), {})
    cpu_request       = optional(string)
    memory_request    = optional(string)
    memory_limit      = optional(string)
  })
  default  = {}
  nullable = false
  validation {
    condition     = var.controller.replicas >= 1 && var.controller.replicas <= 10
    error_message = "controller.replicas must be from 1 to 10 (2 keeps a warm standby)."
  }
  validation {
    condition     = contains(["trace", "debug", "info", "warn", "error"], var.controller.log_level) && contains(["json", "text"], var.controller.log_format)
    error_message = "controller.log_level must be trace, debug, info, warn or error, and controller.log_format json or text."
  }
  validation {
    condition     = var.controller.image_pull_policy == null || contains(["Always", "IfNotPresent", "Never"], coalesce(var.controller.image_pull_policy, "Always"))
    error_message = "controller.image_pull_policy must be Always, IfNotPresent or Never."
  }
}

variable "destroy_node_claims" {
  description = "Lets `terraform destroy` remove the controller while NodeClaims remain: it deletes them and waits for the controller to drain their nodes and terminate their instances first. Without it such a destroy is refused, naming the NodeClaims. Pools deleted first (the `node-pools` module's `allow_destroy_with_nodes`) leave none."
  type        = bool
  default     = false
  nullable    = false
}

variable "create_spot_service_linked_role" {
  description = "Creates the account's spot service-linked role, `AWSServiceRoleForEC2Spot` (`stowage_spot_service_linked_role`), which EC2 needs for spot launches. Turn it on in an account that has never run spot instances: EC2 would create the role on the first spot launch, but the controller's policy does not allow it (`iam:CreateServiceLinkedRole`), and spot launches then fail with `AuthFailure.ServiceLinkedRoleCreationNotPermitted`. An existing role is adopted; destroying leaves it."
  type        = bool
  default     = false
  nullable    = false
}
