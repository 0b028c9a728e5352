package v1alpha1

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validate checks a NodePool and returns every problem, each naming its field and the fix.
func (in *NodePool) Validate() field.ErrorList {
	spec := field.NewPath("spec")
	tmpl := spec.Child("template")
	var errs field.ErrorList
	errs = append(errs, ValidateRequirements(tmpl.Child("spec", "requirements"), in.Spec.Template.Spec.Requirements)...)
	errs = append(errs, validateLabels(tmpl.Child("metadata", "labels"), in.Spec.Template.ObjectMeta.Labels)...)
	errs = append(errs, validateTaints(tmpl.Child("spec", "taints"), in.Spec.Template.Spec.Taints)...)
	errs = append(errs, validateTaints(tmpl.Child("spec", "startupTaints"), in.Spec.Template.Spec.StartupTaints)...)
	errs = append(errs, validateNodeClassRef(tmpl.Child("spec", "nodeClassRef"), in.Spec.Template.Spec.NodeClassRef)...)
	errs = append(errs, validateDisruption(spec.Child("disruption"), &in.Spec.Disruption)...)
	errs = append(errs, validateResourceList(spec.Child("limits"), in.Spec.Limits)...)
	errs = append(errs, in.validateFloor(spec)...)
	if w := in.Spec.Weight; w != nil && (*w < 1 || *w > 100) {
		errs = append(errs, field.Invalid(spec.Child("weight"), *w, "must be between 1 and 100; leave it unset for the lowest priority"))
	}
	if m := in.Spec.MinPodPriority; m != nil && *m > MaxPodPriority {
		errs = append(errs, field.Invalid(spec.Child("minPodPriority"), *m,
			fmt.Sprintf("must be at most %d (system-node-critical's priority), or no pod could ever cause a launch; lower it or leave it unset", MaxPodPriority)))
	}
	return errs
}

// MaxPodPriority is the highest priority a pod can have: the
// system-node-critical PriorityClass's value.
const MaxPodPriority = 2000001000

// ValidateRequirements checks requirements as a NodePool or NodeClaim carries them.
func ValidateRequirements(path *field.Path, reqs []NodeSelectorRequirementWithMinValues) field.ErrorList {
	var errs field.ErrorList
	for i, r := range reqs {
		errs = append(errs, ValidateRequirement(path.Index(i), r)...)
	}
	return errs
}

// ValidateRequirement checks one requirement: its key, operator, values and minValues.
func ValidateRequirement(path *field.Path, r NodeSelectorRequirementWithMinValues) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(r.Key) {
		errs = append(errs, field.Invalid(path.Child("key"), r.Key, msg))
	}
	errs = append(errs, validateRequirementKey(path.Child("key"), r.Key)...)
	errs = append(errs, validateOperatorValues(path, r)...)
	if CanonicalLabelKey(r.Key) == LabelCapacityType && r.Operator == OperatorIn {
		for j, v := range r.Values {
			if !slices.Contains(CapacityTypes, v) {
				errs = append(errs, field.NotSupported(path.Child("values").Index(j), v, CapacityTypes))
			}
		}
	}
	if r.MinValues != nil {
		errs = append(errs, validateMinValues(path, r)...)
	}
	return errs
}

// validateRequirementKey refuses the keys a pool cannot constrain: the ones
// set per node or per pool, Karpenter's that Stowage has no value for, and
// unknown ones in the domains Kubernetes, Stowage and Karpenter own, with the
// nearest known key.
func validateRequirementKey(path *field.Path, key string) field.ErrorList {
	switch {
	case key == LabelNodePool || key == corev1.LabelHostname:
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("%s is set by Stowage and cannot be required; remove this requirement", key))}
	case KarpenterLabelsWithoutEquivalent[key] != "":
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("%s is a Karpenter label Stowage has no value for: %s; remove this requirement", key, KarpenterLabelsWithoutEquivalent[key]))}
	case IsRestrictedRequirementKey(key):
		hint := fmt.Sprintf("use a well-known key such as %s, or your own prefix such as example.com/", LabelInstanceFamily)
		if near := NearestWellKnownLabel(key); near != "" {
			hint = fmt.Sprintf("did you mean %s?", near)
		}
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("%s is in a domain Kubernetes, Stowage or Karpenter owns but is not a well-known label; %s", key, hint))}
	}
	return nil
}

func validateOperatorValues(path *field.Path, r NodeSelectorRequirementWithMinValues) field.ErrorList {
	values := path.Child("values")
	switch r.Operator {
	case OperatorIn:
		if len(r.Values) == 0 {
			return field.ErrorList{field.Required(values, "In needs at least one value; use Exists to allow any")}
		}
	case OperatorNotIn:
	case OperatorExists, OperatorDoesNotExist:
		if len(r.Values) > 0 {
			return field.ErrorList{field.Invalid(values, r.Values, r.Operator+" takes no values; remove them")}
		}
	case OperatorGt, OperatorLt, OperatorGte, OperatorLte:
		if len(r.Values) != 1 {
			return field.ErrorList{field.Invalid(values, r.Values, r.Operator+" takes exactly one integer value")}
		}
		if n, err := strconv.Atoi(r.Values[0]); err != nil || n < 0 {
			return field.ErrorList{field.Invalid(values.Index(0), r.Values[0], r.Operator+" compares non-negative integers; write e.g. \"4\"")}
		}
	default:
		return field.ErrorList{field.NotSupported(path.Child("operator"), r.Operator, Operators)}
	}
	for j, v := range r.Values {
		for _, msg := range validation.IsValidLabelValue(v) {
			return field.ErrorList{field.Invalid(values.Index(j), v, msg)}
		}
	}
	return nil
}

func validateMinValues(path *field.Path, r NodeSelectorRequirementWithMinValues) field.ErrorList {
	p := path.Child("minValues")
	if *r.MinValues < 1 || *r.MinValues > 50 {
		return field.ErrorList{field.Invalid(p, *r.MinValues, "must be between 1 and 50")}
	}
	if distinct := len(slices.Compact(slices.Sorted(slices.Values(r.Values)))); r.Operator == OperatorIn && *r.MinValues > distinct {
		return field.ErrorList{field.Invalid(p, *r.MinValues, fmt.Sprintf("asks for %d values but only %d distinct ones are listed; list more values or lower minValues", *r.MinValues, distinct))}
	}
	return nil
}

func validateLabels(path *field.Path, labels map[string]string) field.ErrorList {
	var errs field.ErrorList
	for _, k := range sortedKeys(labels) {
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(path.Key(k), k, msg))
		}
		for _, msg := range validation.IsValidLabelValue(labels[k]) {
			errs = append(errs, field.Invalid(path.Key(k), labels[k], msg))
		}
		if IsRestrictedLabel(k) {
			errs = append(errs, field.Forbidden(path.Key(k), fmt.Sprintf("%s is in a domain Kubernetes or Stowage owns; use your own prefix such as example.com/", k)))
		}
	}
	return errs
}

// IsRestrictedLabel reports whether a label key belongs to Kubernetes, Stowage or
// Karpenter and so may not be set by a NodePool.
func IsRestrictedLabel(key string) bool {
	if WellKnownLabels[key] || KarpenterLabelAliases[key] != "" {
		return true
	}
	domain, _, found := strings.Cut(key, "/")
	if !found {
		return false
	}
	for _, ex := range LabelDomainExceptions {
		if domain == ex || strings.HasSuffix(domain, "."+ex) {
			return false
		}
	}
	for _, d := range RestrictedLabelDomains {
		if domain == d || strings.HasSuffix(domain, "."+d) {
			return true
		}
	}
	return false
}

// IsRestrictedRequirementKey reports whether a NodePool may not constrain key: inside
// the domains Kubernetes, Stowage and Karpenter own, only the well-known labels
// (Stowage's, and Karpenter's that stand for them) can be required.
func IsRestrictedRequirementKey(key string) bool {
	return !WellKnownLabels[key] && KarpenterLabelAliases[key] == "" && IsRestrictedLabel(key)
}

var taintEffects = []string{string(corev1.TaintEffectNoSchedule), string(corev1.TaintEffectPreferNoSchedule), string(corev1.TaintEffectNoExecute)}

func validateTaints(path *field.Path, taints []corev1.Taint) field.ErrorList {
	var errs field.ErrorList
	for i, t := range taints {
		for _, msg := range validation.IsQualifiedName(t.Key) {
			errs = append(errs, field.Invalid(path.Index(i).Child("key"), t.Key, msg))
		}
		for _, msg := range validation.IsValidLabelValue(t.Value) {
			errs = append(errs, field.Invalid(path.Index(i).Child("value"), t.Value, msg))
		}
		if !slices.Contains(taintEffects, string(t.Effect)) {
			errs = append(errs, field.NotSupported(path.Index(i).Child("effect"), t.Effect, taintEffects))
		}
	}
	return errs
}

func validateNodeClassRef(path *field.Path, ref *NodeClassReference) field.ErrorList {
	if ref == nil || ref.Name == "" {
		return field.ErrorList{field.Required(path.Child("name"), "name the NodeClass the pool's nodes launch with")}
	}
	if ref.Group != "" && ref.Group != Group {
		return field.ErrorList{field.NotSupported(path.Child("group"), ref.Group, []string{Group})}
	}
	if ref.Kind != "" && ref.Kind != DefaultNodeClassKind {
		return field.ErrorList{field.NotSupported(path.Child("kind"), ref.Kind, []string{DefaultNodeClassKind})}
	}
	return nil
}

func validateDisruption(path *field.Path, d *Disruption) field.ErrorList {
	var errs field.ErrorList
	if d.ConsolidationPolicy != "" && !slices.Contains(ConsolidationPolicies, d.ConsolidationPolicy) {
		errs = append(errs, field.NotSupported(path.Child("consolidationPolicy"), d.ConsolidationPolicy, ConsolidationPolicies))
	}
	if d.ConsolidationMinSavings != nil {
		if _, err := ParseShare(*d.ConsolidationMinSavings); err != nil {
			errs = append(errs, field.Invalid(path.Child("consolidationMinSavings"), *d.ConsolidationMinSavings, err.Error()))
		}
	}
	for i, b := range d.Budgets {
		errs = append(errs, validateBudget(path.Child("budgets").Index(i), b)...)
	}
	return errs
}

func validateBudget(path *field.Path, b Budget) field.ErrorList {
	var errs field.ErrorList
	if _, err := ParseBudgetNodes(b.Nodes); err != nil {
		errs = append(errs, field.Invalid(path.Child("nodes"), b.Nodes, err.Error()))
	}
	if (b.Schedule == nil) != (b.Duration == nil) {
		errs = append(errs, field.Invalid(path, b.Schedule, "schedule and duration go together; set both or neither"))
	}
	if b.Schedule != nil {
		if err := ValidateCron(*b.Schedule); err != nil {
			errs = append(errs, field.Invalid(path.Child("schedule"), *b.Schedule, err.Error()))
		}
	}
	for j, r := range b.Reasons {
		switch {
		case r == "Expired":
			errs = append(errs, field.Invalid(path.Child("reasons").Index(j), r,
				"expiration is not budgeted: a node past its expireAfter is replaced whatever the budgets say; remove Expired from reasons"))
		case !slices.Contains(DisruptionReasons, r):
			errs = append(errs, field.NotSupported(path.Child("reasons").Index(j), r, DisruptionReasons))
		}
	}
	return errs
}

// ParseShare reads a percentage from "0%" to "100%" as a share from 0 to 1.
func ParseShare(s string) (float64, error) {
	v, pct := strings.CutSuffix(s, "%")
	n, err := strconv.Atoi(v)
	if err != nil || !pct || n < 0 || n > 100 || v != strconv.Itoa(n) {
		return 0, fmt.Errorf("want a percentage from 0%% to 100%% such as \"15%%\"")
	}
	return float64(n) / 100, nil
}

// BudgetNodes is a parsed Budget.Nodes: a count or a percentage.
type BudgetNodes struct {
	Value   int
	Percent bool
}

// ParseBudgetNodes reads "3" or "10%".
func ParseBudgetNodes(s string) (BudgetNodes, error) {
	v, pct := strings.CutSuffix(s, "%")
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || (pct && n > 100) {
		return BudgetNodes{}, fmt.Errorf("want a node count such as \"3\" or a percentage from 0%% to 100%% such as \"10%%\"")
	}
	return BudgetNodes{Value: n, Percent: pct}, nil
}

// Allowed is how many of total nodes the budget lets be disrupted at once; percentages round down.
func (b BudgetNodes) Allowed(total int) int {
	if !b.Percent {
		return b.Value
	}
	return total * b.Value / 100
}

// cronShape is the CRD's rule on a schedule's shape (RE2, as CEL's matches):
// five fields separated by spaces or tabs.
var cronShape = regexp.MustCompile(`^\s*\S+(\s+\S+){4}\s*$`)

var cronMacros = []string{"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}

// ValidateCron checks a budget schedule as the disruption controller reads
// it: a five-field cron expression in UTC or a macro, which the cron parser
// accepts and which fires at least once in the next five years (an
// expression such as "0 0 30 2 *" never does).
func ValidateCron(s string) error {
	if !slices.Contains(cronMacros, s) {
		if n := len(strings.Fields(s)); n != 5 || !cronShape.MatchString(s) {
			return fmt.Errorf("want five fields (minute hour day-of-month month day-of-week) separated by spaces, or a macro such as @daily, got %d fields", n)
		}
	}
	schedule, err := ParseCron(s)
	if err != nil {
		return fmt.Errorf("%v; write e.g. \"0 9 * * 1-5\" (09:00 UTC on weekdays)", err)
	}
	if schedule.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
		return errors.New("never fires: no date matches every field (check day-of-month against month)")
	}
	return nil
}

// ParseCron parses a budget schedule, in UTC; the disruption controller and
// ValidateCron share it.
func ParseCron(s string) (cron.Schedule, error) {
	if strings.Contains(s, "TZ=") {
		return nil, errors.New("schedules are in UTC; remove the TZ= prefix")
	}
	return cron.ParseStandard("TZ=UTC " + s)
}

func validateResourceList(path *field.Path, rl corev1.ResourceList) field.ErrorList {
	var errs field.ErrorList
	for _, name := range sortedKeys(rl) {
		if q := rl[name]; q.Sign() < 0 {
			errs = append(errs, field.Invalid(path.Key(string(name)), q.String(), "must not be negative"))
		}
	}
	return errs
}

func sortedKeys[K ~string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
