package metricsref

// KarpenterNames maps a Stowage metric onto the Karpenter metrics it stands
// for, with what differs where something does, so that a dashboard can be
// ported by renaming. A name here that no longer exists fails a test.
var KarpenterNames = map[string]string{
	"stowage_nodeclaims_created_total":                            "`karpenter_nodeclaims_created_total`",
	"stowage_nodeclaims_terminated_total":                         "`karpenter_nodeclaims_terminated_total`",
	"stowage_nodeclaims_termination_duration_seconds":             "`karpenter_nodeclaims_termination_duration_seconds`; `karpenter_nodes_termination_duration_seconds` (a node ends with its claim)",
	"stowage_nodeclaims_disrupted_total":                          "`karpenter_nodeclaims_disrupted_total`",
	"stowage_disruption_decisions_total":                          "`karpenter_voluntary_disruption_decisions_total` (here also by action: delete or replace)",
	"stowage_disruption_eligible_nodes":                           "`karpenter_voluntary_disruption_eligible_nodes`",
	"stowage_disruption_commands_total":                           "`karpenter_voluntary_disruption_queue_failures_total` is `{result=\"failed\"}`",
	"stowage_nodeclaims_drifted_total":                            "`karpenter_nodeclaims_drifted_total`",
	"stowage_nodeclaims_registered_total":                         "`karpenter_nodes_created_total` (a node is created when its claim registers)",
	"stowage_nodes_terminated_total":                              "`karpenter_nodes_terminated_total`",
	"stowage_provisioner_scheduling_duration_seconds":             "`karpenter_scheduler_scheduling_duration_seconds`",
	"stowage_scheduler_unschedulable_pods_count":                  "`karpenter_scheduler_queue_depth` (here: what the last batch could not place)",
	"stowage_disruption_decision_evaluation_duration_seconds":     "`karpenter_voluntary_disruption_decision_evaluation_duration_seconds`",
	"stowage_disruption_budgets_allowed_disruptions":              "`karpenter_nodepools_allowed_disruptions`",
	"stowage_nodepool_usage":                                      "`karpenter_nodepools_usage`",
	"stowage_nodepool_limit":                                      "`karpenter_nodepools_limit`",
	"stowage_interruption_received_total":                         "`karpenter_interruption_received_messages_total` (the Lambda reads the queue; this counts the marks acted on)",
	"stowage_interruption_deadline_margin_seconds":                "`karpenter_interruption_message_queue_duration_seconds` (here: the time left when acted on)",
	"stowage_cluster_state_synced":                                "`karpenter_cluster_state_synced`",
	"stowage_cloudprovider_duration_seconds":                      "`karpenter_cloudprovider_duration_seconds`; `karpenter_nodeclaims_instance_termination_duration_seconds` is `{method=\"Delete\"}`",
	"stowage_cloudprovider_errors_total":                          "`karpenter_cloudprovider_errors_total`",
	"stowage_disruption_consolidation_score":                      "`karpenter_consolidation_score` (by nodepool and decision; Stowage's eviction cost adds a pod's age and PDB headroom)",
	"stowage_cloudprovider_instance_type_offering_available":      "`karpenter_cloudprovider_instance_type_offering_available`",
	"stowage_cloudprovider_instance_type_offering_price_estimate": "`karpenter_cloudprovider_instance_type_offering_price_estimate`",
	"stowage_build_info":                                          "`karpenter_build_info` (here without `goversion` and `goarch`)",
}

// KarpenterOnly lists Karpenter's metrics Stowage has no equivalent of, and why.
var KarpenterOnly = [][2]string{
	{"`karpenter_nodeclaims_unhealthy_disrupted_total`", "Stowage has no node repair"},
	{"`karpenter_nodes_allocatable`, `_system_overhead`, `_total_pod_requests`, `_total_pod_limits`, `_total_daemon_requests`, `_total_daemon_limits`", "the node's `status.allocatable` and kube-state-metrics' `kube_pod_container_resource_requests` carry them"},
	{"`karpenter_nodes_leases_deleted_total`", "Stowage deletes no leases"},
	{"`karpenter_pods_state`", "kube-state-metrics' `kube_pod_status_phase`"},
	{"`karpenter_pods_startup_duration_seconds`", "none in the controller; `stowage simulate` reports pod-to-Running per tier"},
	{"`karpenter_ignored_pod_count`", "none"},
	{"`karpenter_voluntary_disruption_consolidation_timeouts_total`", "consolidation has no timeout: its search is bounded instead (docs/guides/disruption.md)"},
	{"`karpenter_consolidation_moves_total`", "`stowage_disruption_consolidation_score`'s count, by decision"},
	{"`karpenter_interruption_deleted_messages_total`", "the Lambda's event source mapping deletes the messages"},
	{"`karpenter_cluster_state_node_count`", "none"},
	{"`karpenter_cloudprovider_instance_type_cpu_cores`, `_memory_bytes`", "the instance type's labels and the catalogue"},
	{"`karpenter_cloudprovider_batcher_batch_time_seconds`, `_batch_size`", "Stowage batches pods, not cloud calls"},
	{"`controller_runtime_*`, `workqueue_*`, `client_go_*`, `leader_election_*`", "the same, from controller-runtime and client-go"},
	{"`aws_sdk_go_*`", "none"},
	{"`operator_status_condition_*`", "none: Stowage's conditions are in each object's status"},
}
