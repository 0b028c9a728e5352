package simulate

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// highestUserPriority is the largest value a PriorityClass may give that
// is not one of the system's own (scheduling.HighestUserDefinablePriority).
const highestUserPriority = 1_000_000_000

// systemPriorities are the PriorityClasses every cluster has.
var systemPriorities = map[string]int32{"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}

// validatePDB checks a PodDisruptionBudget as the API server does, and asks
// for a budget: one without minAvailable or maxUnavailable allows no
// eviction ever (its expected pod count is 0), which is never what is meant.
func validatePDB(pdb *policyv1.PodDisruptionBudget) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	switch {
	case pdb.Spec.MinAvailable != nil && pdb.Spec.MaxUnavailable != nil:
		errs = append(errs, field.Invalid(spec, "minAvailable and maxUnavailable", "set one of them, not both"))
	case pdb.Spec.MinAvailable == nil && pdb.Spec.MaxUnavailable == nil:
		errs = append(errs, field.Required(spec.Child("minAvailable"), "set minAvailable or maxUnavailable, e.g. maxUnavailable: 1"))
	}
	errs = append(errs, validateBudget(spec.Child("minAvailable"), pdb.Spec.MinAvailable)...)
	errs = append(errs, validateBudget(spec.Child("maxUnavailable"), pdb.Spec.MaxUnavailable)...)
	errs = append(errs, metav1validation.ValidateLabelSelector(pdb.Spec.Selector, metav1validation.LabelSelectorValidationOptions{}, spec.Child("selector"))...)
	if p := pdb.Spec.UnhealthyPodEvictionPolicy; p != nil && *p != policyv1.IfHealthyBudget && *p != policyv1.AlwaysAllow {
		errs = append(errs, field.NotSupported(spec.Child("unhealthyPodEvictionPolicy"), *p, []policyv1.UnhealthyPodEvictionPolicyType{policyv1.IfHealthyBudget, policyv1.AlwaysAllow}))
	}
	return errs
}

// validateBudget checks a count or a percentage of 0% to 100%.
func validateBudget(path *field.Path, v *intstr.IntOrString) field.ErrorList {
	if v == nil {
		return nil
	}
	if v.Type == intstr.Int {
		if v.IntVal < 0 {
			return field.ErrorList{field.Invalid(path, v.IntVal, "must not be negative")}
		}
		return nil
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(v, 100, false)
	if err != nil || n < 0 || n > 100 {
		return field.ErrorList{field.Invalid(path, v.StrVal, "must be a count or a percentage from 0% to 100%, e.g. 20%")}
	}
	return nil
}

// validatePriorities checks the PriorityClasses as the API server does, and
// that every pod template names one that exists, as the Priority admission
// plugin requires; check places each error on its object's lines.
func (s *Scenario) validatePriorities(check func(obj any, list field.ErrorList)) {
	defaults := 0
	for _, pc := range s.PriorityClasses {
		var errs field.ErrorList
		if strings.HasPrefix(pc.Name, "system-") {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), pc.Name, "the system- prefix is reserved; rename the class"))
		}
		if pc.Value > highestUserPriority {
			errs = append(errs, field.Invalid(field.NewPath("value"), pc.Value, fmt.Sprintf("must be at most %d", highestUserPriority)))
		}
		if p := pc.PreemptionPolicy; p != nil && *p != corev1.PreemptLowerPriority && *p != corev1.PreemptNever {
			errs = append(errs, field.NotSupported(field.NewPath("preemptionPolicy"), *p, []corev1.PreemptionPolicy{corev1.PreemptLowerPriority, corev1.PreemptNever}))
		}
		if pc.GlobalDefault {
			if defaults++; defaults > 1 {
				errs = append(errs, field.Invalid(field.NewPath("globalDefault"), true, "another PriorityClass of the file is the global default already; keep one"))
			}
		}
		check(pc, errs)
	}
	path := field.NewPath("spec", "template", "spec", "priorityClassName")
	for _, t := range s.podTemplates() {
		if name := t.spec.PriorityClassName; name != "" && s.priorityClass(name) == nil {
			if _, system := systemPriorities[name]; !system {
				check(t.owner, field.ErrorList{field.NotFound(path, name)})
			}
		}
	}
}

// podTemplate is a workload's pod spec and the object that holds it.
type podTemplate struct {
	owner any
	spec  *corev1.PodSpec
}

func (s *Scenario) podTemplates() []podTemplate {
	var out []podTemplate
	for _, d := range s.Deployments {
		out = append(out, podTemplate{d, &d.Spec.Template.Spec})
	}
	for _, j := range s.Jobs {
		out = append(out, podTemplate{j, &j.Spec.Template.Spec})
	}
	for _, ds := range s.DaemonSets {
		out = append(out, podTemplate{ds, &ds.Spec.Template.Spec})
	}
	return out
}

func (s *Scenario) priorityClass(name string) *schedulingv1.PriorityClass {
	i := slices.IndexFunc(s.PriorityClasses, func(pc *schedulingv1.PriorityClass) bool { return pc.Name == name })
	if i < 0 {
		return nil
	}
	return s.PriorityClasses[i]
}

// priorityOf is what the Priority admission plugin gives a pod: its class's
// value and preemption policy, the global default class's when it names
// none, or 0.
func (s *Scenario) priorityOf(spec *corev1.PodSpec) (int32, *corev1.PreemptionPolicy) {
	name := spec.PriorityClassName
	if v, ok := systemPriorities[name]; ok {
		return v, nil
	}
	if pc := s.priorityClass(name); pc != nil {
		return pc.Value, pc.PreemptionPolicy
	}
	for _, pc := range s.PriorityClasses {
		if pc.GlobalDefault && name == "" {
			return pc.Value, pc.PreemptionPolicy
		}
	}
	return 0, nil
}
