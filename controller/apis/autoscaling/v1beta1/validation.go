package v1beta1

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// SetDefaults leaves the buffer as written: the CRD's defaults are the API
// server's (provisioningStrategy).
func (b *CapacityBuffer) SetDefaults() {}

// Validate checks what the CRD's schema and rules leave to the autoscaler
// that reads the buffer, as Stowage reads it (controller/capacitybuffer):
// one of podTemplateRef and scalableRef, and a scalableRef of a kind whose
// pod template Stowage can read. Each error names the field and the fix.
func (b *CapacityBuffer) Validate() field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	switch ref := b.Spec.ScalableRef; {
	case ref == nil && b.Spec.PodTemplateRef == nil:
		errs = append(errs, field.Required(spec.Child("podTemplateRef"), "set podTemplateRef (a PodTemplate) or scalableRef (a workload): the shape of one chunk"))
	case ref != nil && !SupportedScalable(*ref):
		errs = append(errs, field.NotSupported(spec.Child("scalableRef", "kind"), ref.APIGroup+"/"+ref.Kind,
			[]string{"apps/" + KindDeployment, "apps/" + KindStatefulSet, "apps/" + KindReplicaSet, "batch/" + KindJob}))
	}
	if p := b.Spec.Percentage; p != nil && b.Spec.ScalableRef == nil {
		errs = append(errs, field.Invalid(spec.Child("percentage"), *p, "a percentage of the workload's replicas needs scalableRef; use replicas with podTemplateRef"))
	}
	return errs
}

// SupportedScalable reports whether a scalableRef names a kind whose pod
// template and replicas Stowage reads: a Deployment, StatefulSet or
// ReplicaSet (group apps) or a Job (group batch); the group may be left empty.
func SupportedScalable(ref ScalableRef) bool {
	switch ref.Kind {
	case KindDeployment, KindStatefulSet, KindReplicaSet:
		return ref.APIGroup == "" || ref.APIGroup == "apps"
	case KindJob:
		return ref.APIGroup == "" || ref.APIGroup == "batch"
	}
	return false
}
