package manifest

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidatePodSpec refuses what the API server refuses in a pod's resources
// and a scheduler would otherwise misread: a negative request, limit or
// overhead (a container asking for -4 cpu would cancel a sibling's 4500m),
// and a request above its limit.
func ValidatePodSpec(path *field.Path, spec *corev1.PodSpec) field.ErrorList {
	var errs field.ErrorList
	for i := range spec.InitContainers {
		errs = append(errs, validateRequirements(path.Child("initContainers").Index(i).Child("resources"), spec.InitContainers[i].Resources)...)
	}
	for i := range spec.Containers {
		errs = append(errs, validateRequirements(path.Child("containers").Index(i).Child("resources"), spec.Containers[i].Resources)...)
	}
	errs = append(errs, nonNegative(path.Child("overhead"), spec.Overhead)...)
	if spec.Resources != nil {
		errs = append(errs, validateRequirements(path.Child("resources"), *spec.Resources)...)
	}
	return errs
}

func validateRequirements(path *field.Path, r corev1.ResourceRequirements) field.ErrorList {
	errs := nonNegative(path.Child("requests"), r.Requests)
	errs = append(errs, nonNegative(path.Child("limits"), r.Limits)...)
	for _, name := range sortedNames(r.Requests) {
		req := r.Requests[name]
		if limit, ok := r.Limits[name]; ok && req.Cmp(limit) > 0 {
			errs = append(errs, field.Invalid(path.Child("requests").Key(string(name)), req.String(),
				fmt.Sprintf("must be less than or equal to the %s limit (%s); raise the limit or lower the request", name, limit.String())))
		}
	}
	return errs
}

func nonNegative(path *field.Path, rl corev1.ResourceList) field.ErrorList {
	var errs field.ErrorList
	for _, name := range sortedNames(rl) {
		if q := rl[name]; q.Sign() < 0 {
			errs = append(errs, field.Invalid(path.Key(string(name)), q.String(), "must be greater than or equal to 0"))
		}
	}
	return errs
}

func sortedNames(rl corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(rl))
	for n := range rl {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
