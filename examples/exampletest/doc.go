// Package exampletest applies the configurations in examples/ (complete,
// gpu-fallback, migrate-from-karpenter) as a user would: the real terraform
// CLI with the provider built from this tree, offline, on one shared
// whole-system bed (internal/tfbed: a real kube-apiserver, scheduler and
// controller manager, kwok, the AWS emulator) that the examples' provider
// blocks reach as an EKS cluster. Each is applied, planned with no change,
// exercised with the controller run as it deployed it, and destroyed,
// leaving nothing in the emulator or the cluster.
package exampletest
