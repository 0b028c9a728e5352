// Package testenv starts the real components Stowage's tests stand on: etcd,
// kube-apiserver, kube-scheduler, kube-controller-manager and kwok, built from
// the Go module proxy by hack/tools/build-components.sh (`make tools`) into a
// cache folder outside the work tree.
//
// Every server binds 127.0.0.1 only, on free ports, with certificates generated
// in Go into a temporary folder that Stop removes. Each process logs to a file
// in that folder; start errors carry the tail of the failing process's log.
//
// Tests that only need an API server can use controller-runtime's envtest with
// KUBEBUILDER_ASSETS set to EnvtestAssets().
package testenv
