// Package e2e holds Stowage's end-to-end tests and the bed's benchmarks: they
// run the operator's own wiring on the whole-system bed of internal/testbed
// (real kube-apiserver, etcd, kube-scheduler, kube-controller-manager and
// kwok, and the AWS emulator behind the real SDK).
package e2e
