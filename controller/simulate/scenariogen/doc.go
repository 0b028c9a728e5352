// Package scenariogen writes scenarios nobody wrote by hand: a seed gives
// random NodePools (weights, limits, requirements over the catalogue's real
// instance families, capacity types, zones, taints), NodeClasses, and
// workloads with every constraint kind (node selectors, required and
// preferred node affinity, pod affinity and anti-affinity, topology spread
// over zones, hostnames and capacity types with both whenUnsatisfiable
// values, tolerations, GPUs), DaemonSets, Jobs and Deployments with replica
// curves, shortage windows and spot interruptions, as the multi-document
// file `stowage simulate --scenario` reads.
//
// Check runs a seed's scenario through simulate.RunChecked twice, so that
// every invariant is checked at every instant and the two reports must be
// the same bytes; Shrink cuts a failing scenario down (documents, pools,
// workloads, constraints, steps) while the failure holds, so that the file
// a failure leaves behind is small enough to read.
package scenariogen
