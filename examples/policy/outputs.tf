output "cost_per_hour" {
  description = "What the policy costs at the peak, US dollars per hour."
  value       = data.stowage_plan.peak.cost_per_hour
}

output "peak_nodes" {
  description = "The nodes the peak launches, by pool, type, zone and capacity type."
  value       = data.stowage_plan.peak.summary
}
