// Package v1 is the ProvisioningRequest API of group autoscaling.x-k8s.io,
// the one Cluster Autoscaler reads and Kueue's ProvisioningRequest admission
// check writes: wire-compatible Go types written to the CRD that ../crd
// holds (copied from kubernetes/autoscaler; its Go module is not served
// here). The CRD serves v1 (storage) and the deprecated v1beta1 with one
// schema; the client reads and writes v1. crd_test.go checks every field
// against the CRD's schema of both versions.
//
// The CRD comes from upstream, not from these types: the package is skipped
// by controller-gen's CRD generator and only gets its deepcopy code.
//
// +kubebuilder:object:generate=true
// +kubebuilder:skip
// +groupName=autoscaling.x-k8s.io
package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group is the API group of ProvisioningRequests.
const Group = "autoscaling.x-k8s.io"

// SchemeGroupVersion is the version the client reads and writes, the CRD's
// storage version.
var SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: "v1"}

var (
	// SchemeBuilder registers the types of this package with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the types of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, &ProvisioningRequest{}, &ProvisioningRequestList{})
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
