package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ProvisioningRequest asks for capacity for a set of pods as one unit: pod
// sets of a PodTemplate and a count, under a provisioning class that says
// whether the autoscaler only checks that they fit in what exists or
// launches all of their capacity or none. Its spec is immutable.
// +kubebuilder:object:root=true
type ProvisioningRequest struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ProvisioningRequestSpec   `json:"spec"`
	Status ProvisioningRequestStatus `json:"status,omitempty"`
}

// ProvisioningRequestSpec is the capacity asked for.
type ProvisioningRequestSpec struct {
	// PodSets are the groups of pods to provision for (1 to 32).
	PodSets []PodSet `json:"podSets"`
	// ProvisioningClassName is CheckCapacityClass, AtomicScaleUpClass, or
	// another autoscaler's class, which Stowage leaves alone.
	ProvisioningClassName string `json:"provisioningClassName"`
	// Parameters are the class's settings (ValidUntilSeconds for the
	// atomic class).
	Parameters map[string]Parameter `json:"parameters,omitempty"`
}

// PodSet is Count pods of a PodTemplate in the request's namespace.
type PodSet struct {
	PodTemplateRef Reference `json:"podTemplateRef"`
	Count          int32     `json:"count"`
}

// Reference names an object in the request's namespace.
type Reference struct {
	Name string `json:"name"`
}

// Parameter is a class parameter's value, up to 255 characters.
type Parameter string

// Detail is a class's detail for users, up to 32768 characters.
type Detail string

// ProvisioningRequestStatus is what the autoscaler did.
type ProvisioningRequestStatus struct {
	// Conditions: Accepted, Provisioned, Failed, BookingExpired,
	// CapacityRevoked.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ProvisioningClassDetails are the class's details for users.
	ProvisioningClassDetails map[string]Detail `json:"provisioningClassDetails,omitempty"`
}

// ProvisioningRequestList is a list of ProvisioningRequests.
// +kubebuilder:object:root=true
type ProvisioningRequestList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProvisioningRequest `json:"items"`
}

// The classes, condition types and pod annotations of the API, as Cluster
// Autoscaler defines them (apis/provisioningrequest/autoscaling.x-k8s.io/v1).
const (
	CheckCapacityClass = "check-capacity.autoscaling.x-k8s.io"
	AtomicScaleUpClass = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"

	// Accepted: the request is valid and the autoscaler works on it.
	Accepted = "Accepted"
	// Provisioned: the capacity is there, booked for the request's pods.
	Provisioned = "Provisioned"
	// Failed: the capacity could not be had; the reason and message say why.
	Failed = "Failed"
	// BookingExpired: the capacity was Provisioned and its booking time
	// ended; it is no longer kept for the request.
	BookingExpired = "BookingExpired"
	// CapacityRevoked: capacity the request was Provisioned no longer exists.
	CapacityRevoked = "CapacityRevoked"

	// ConsumeAnnotation on a pod names the request (in the pod's namespace)
	// whose booked capacity the pod uses.
	ConsumeAnnotation = "autoscaling.x-k8s.io/consume-provisioning-request"
	// DeprecatedConsumeAnnotation is ConsumeAnnotation's older name, which
	// Kueue still writes.
	DeprecatedConsumeAnnotation = "cluster-autoscaler.kubernetes.io/consume-provisioning-request"
	// ClassAnnotation on a pod names the request's class.
	ClassAnnotation = "autoscaling.x-k8s.io/provisioning-class-name"

	// ValidUntilSecondsParameter bounds, from the request's creation, how
	// long the atomic class retries.
	ValidUntilSecondsParameter = "ValidUntilSeconds"
)
