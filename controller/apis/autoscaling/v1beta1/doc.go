// Package v1beta1 is the CapacityBuffer API of group autoscaling.x-k8s.io,
// the one Cluster Autoscaler (and Karpenter) read: wire-compatible Go types
// written to the CRD that ../crd holds (copied from kubernetes/autoscaler;
// its Go module is not served here). The CRD serves v1alpha1 and v1beta1
// with one schema and stores v1beta1; these types read either, and the
// client reads and writes v1beta1. crd_test.go checks every field against
// the CRD's schema of both versions.
//
// The CRD comes from upstream, not from these types: the package is skipped
// by controller-gen's CRD generator and only gets its deepcopy code.
//
// +kubebuilder:object:generate=true
// +kubebuilder:skip
// +groupName=autoscaling.x-k8s.io
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group is the API group of CapacityBuffers.
const Group = "autoscaling.x-k8s.io"

// SchemeGroupVersion is the version the client reads and writes, the CRD's
// storage version.
var SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: "v1beta1"}

// ServedVersions are every version the CRD serves with this schema; a file
// may hold either.
var ServedVersions = []string{Group + "/v1alpha1", Group + "/v1beta1"}

var (
	// SchemeBuilder registers the types of this package with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the types of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, &CapacityBuffer{}, &CapacityBufferList{})
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
