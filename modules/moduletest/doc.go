// Package moduletest applies the Terraform modules in modules/ with the real
// terraform CLI and the provider built from this tree (internal/tfcli),
// offline, against a real kube-apiserver serving Stowage's CRDs: apply, a plan
// that shows no change, destroy that leaves nothing behind.
package moduletest
