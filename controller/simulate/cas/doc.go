// Package cas models the Kubernetes Cluster Autoscaler (CA) with its documented
// defaults, as the baseline `stowage simulate --compare cas` runs beside Stowage.
//
// The model is pure: it reads the cluster through World, acts on it only through
// World.Launch and World.Remove, and reads time from an injected clock. The
// simulator calls Autoscaler.RunOnce every Config.ScanInterval of virtual time.
//
// What it models, after CA's FAQ and flags (cluster-autoscaler/FAQ.md,
// main.go defaults, expander/waste, estimator/binpacking, utils/backoff):
//
//   - Node groups are ASGs of one instance type each, with a set of zones, a
//     capacity type, min and max size, labels and taints.
//   - Scale-up: of the pods World could not schedule, those that would fit on
//     nodes still coming up are left alone. For the rest, every group that is not backed
//     off, is below max size and whose template node fits the pod (resources,
//     nodeSelector and required node affinity on labels, taints) is sized by
//     the binpacking estimator (first fit decreasing onto template nodes). The
//     least-waste expander picks one group per loop: the smallest sum of idle
//     CPU and idle memory fractions after the scale-up.
//   - The ASG spreads new instances over its zones (fewest instances first)
//     and retries a zone's shortfall in its other zones; it never tries another
//     instance type.
//   - A group whose scale-up falls short (InsufficientInstanceCapacity or any
//     launch error) or whose nodes are not Ready within max-node-provision-time
//     (15m) is backed off: 5m, doubling on each failure after the previous
//     backoff ended, capped at 30m, reset 3h after the last failure. After the
//     backoff CA retries the same group.
//   - Scale-down: a ready node is unneeded when its utilization (the larger of
//     requested/allocatable CPU and memory; GPU alone on GPU nodes) is under
//     0.5 and all its pods can move to other nodes. A node unneeded for 10m is
//     deleted, unless a scale-up happened in the last 10m, a deletion in the
//     last scan interval or a failed deletion in the last 3m. Any scale-up
//     attempt counts, even one that falls short: the ASG accepts the new size
//     before its launches fail. Pods move unless annotated safe-to-evict
//     "false", not backed by a controller, or using local storage (emptyDir,
//     hostPath); DaemonSet and mirror pods stay. Empty nodes go in bulk (up
//     to 10 a loop); otherwise one non-empty node a loop. Groups never shrink
//     below min size, nor are they grown to it (enforce-node-group-min-size
//     is off by default). CA never replaces a node by a cheaper type.
//
// Not modelled: pod affinity and anti-affinity, topology spread, PDBs, host
// ports, volumes' zones, balance-similar-node-groups, other expanders, and
// the removal of nodes that turn unready after registering.
package cas
