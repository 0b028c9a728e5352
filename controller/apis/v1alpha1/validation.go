package v1alpha1

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
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
	if w := in.Spec.Weight; w != nil && (*w < 1 || *w > 100) {
		errs = append(errs, field.Invalid(spec.Child("weight"), *w, "must be between 1 and 100; leave it unset for the lowest priority"))
	}
	return errs
}

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
	if r.Key == LabelNodePool || r.Key == corev1.LabelHostname {
		errs = append(errs, field.Forbidden(path.Child("key"), fmt.Sprintf("%s is set by Stowage and cannot be required; remove this requirement", r.Key)))
	} else if IsRestrictedRequirementKey(r.Key) {
		errs = append(errs, field.Forbidden(path.Child("key"), fmt.Sprintf("%s is in a domain Kubernetes or Stowage owns but is not a well-known label; use a well-known key such as %s, or your own prefix such as example.com/", r.Key, LabelInstanceFamily)))
	}
	errs = append(errs, validateOperatorValues(path, r)...)
	if r.Key == LabelCapacityType && r.Operator == OperatorIn {
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
	if r.Operator == OperatorIn && *r.MinValues > len(r.Values) {
		return field.ErrorList{field.Invalid(p, *r.MinValues, fmt.Sprintf("asks for %d values but only %d are listed; list more values or lower minValues", *r.MinValues, len(r.Values)))}
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

// IsRestrictedLabel reports whether a label key belongs to Kubernetes or Stowage and so
// may not be set by a NodePool.
func IsRestrictedLabel(key string) bool {
	if WellKnownLabels[key] {
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
// the domains Kubernetes and Stowage own, only the well-known labels can be required.
func IsRestrictedRequirementKey(key string) bool {
	return !WellKnownLabels[key] && IsRestrictedLabel(key)
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
	policies := []string{ConsolidationPolicyWhenEmpty, ConsolidationPolicyWhenEmptyOrUnderutilized}
	if d.ConsolidationPolicy != "" && !slices.Contains(policies, d.ConsolidationPolicy) {
		errs = append(errs, field.NotSupported(path.Child("consolidationPolicy"), d.ConsolidationPolicy, policies))
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

var cronMacros = []string{"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}

// ValidateCron checks the shape of a five-field cron expression or a macro.
func ValidateCron(s string) error {
	if slices.Contains(cronMacros, s) {
		return nil
	}
	if n := len(strings.Fields(s)); n != 5 {
		return fmt.Errorf("want five fields (minute hour day-of-month month day-of-week) or a macro such as @daily, got %d fields", n)
	}
	return nil
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

// Validate checks a NodeClass and returns every problem, each naming its field and the fix.
func (in *NodeClass) Validate() field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	errs = append(errs, validateAMITerms(spec.Child("amiSelectorTerms"), in.Spec.AMISelectorTerms)...)
	if len(in.Spec.SubnetSelectorTerms) == 0 {
		errs = append(errs, field.Required(spec.Child("subnetSelectorTerms"), "select at least one subnet by tags or id"))
	}
	for i, t := range in.Spec.SubnetSelectorTerms {
		errs = append(errs, validateTagsOrID(spec.Child("subnetSelectorTerms").Index(i), t.Tags, t.ID, "", "tags or id")...)
	}
	if len(in.Spec.SecurityGroupSelectorTerms) == 0 {
		errs = append(errs, field.Required(spec.Child("securityGroupSelectorTerms"), "select at least one security group by tags, id or name"))
	}
	for i, t := range in.Spec.SecurityGroupSelectorTerms {
		errs = append(errs, validateTagsOrID(spec.Child("securityGroupSelectorTerms").Index(i), t.Tags, t.ID, t.Name, "tags, id or name")...)
	}
	if (in.Spec.Role == "") == (in.Spec.InstanceProfile == nil) {
		errs = append(errs, field.Invalid(spec.Child("role"), in.Spec.Role, "set exactly one of role and instanceProfile"))
	}
	errs = append(errs, validateMetadataOptions(spec.Child("metadataOptions"), in.Spec.MetadataOptions)...)
	if in.Spec.Kubelet != nil {
		errs = append(errs, validateKubelet(spec.Child("kubelet"), in.Spec.Kubelet)...)
	}
	return errs
}

func validateAMITerms(path *field.Path, terms []AMISelectorTerm) field.ErrorList {
	if len(terms) == 0 {
		return field.ErrorList{field.Required(path, "select an image, e.g. {alias: al2023@latest}")}
	}
	var errs field.ErrorList
	for i, t := range terms {
		p := path.Index(i)
		switch {
		case t.Alias != "" && (len(terms) > 1 || len(t.Tags) > 0 || t.ID != "" || t.Name != "" || t.Owner != ""):
			errs = append(errs, field.Invalid(p.Child("alias"), t.Alias, "an alias must be the only term and the only field of it"))
		case t.Alias != "":
			errs = append(errs, validateAlias(p.Child("alias"), t.Alias)...)
		case len(t.Tags) == 0 && t.ID == "" && t.Name == "":
			errs = append(errs, field.Required(p, "set alias, tags, id or name"))
		}
		errs = append(errs, validateTagValues(p.Child("tags"), t.Tags)...)
	}
	return errs
}

// AMIFamilies are the image families an alias may name.
var AMIFamilies = []string{"al2023", "bottlerocket"}

func validateAlias(path *field.Path, alias string) field.ErrorList {
	family, version, ok := strings.Cut(alias, "@")
	if !ok || version == "" || !slices.Contains(AMIFamilies, family) {
		return field.ErrorList{field.Invalid(path, alias, "want family@version with family al2023 or bottlerocket, e.g. al2023@latest")}
	}
	return nil
}

// validateTagsOrID checks a selector term; selectors lists the fields the term may set.
func validateTagsOrID(path *field.Path, tags map[string]string, id, name, selectors string) field.ErrorList {
	set := 0
	for _, present := range []bool{len(tags) > 0, id != "", name != ""} {
		if present {
			set++
		}
	}
	if set == 0 {
		return field.ErrorList{field.Required(path, "set "+selectors)}
	}
	if id != "" && set > 1 {
		return field.ErrorList{field.Invalid(path.Child("id"), id, "id selects one object on its own; remove the other fields of this term")}
	}
	return validateTagValues(path.Child("tags"), tags)
}

func validateTagValues(path *field.Path, tags map[string]string) field.ErrorList {
	var errs field.ErrorList
	for _, k := range sortedKeys(tags) {
		if k == "" || tags[k] == "" {
			errs = append(errs, field.Invalid(path.Key(k), tags[k], "tag keys and values must not be empty; use \"*\" to match any value"))
		}
	}
	return errs
}

func validateMetadataOptions(path *field.Path, m *MetadataOptions) field.ErrorList {
	if m == nil {
		return nil
	}
	var errs field.ErrorList
	if m.HTTPTokens != nil && !slices.Contains([]string{"required", "optional"}, *m.HTTPTokens) {
		errs = append(errs, field.NotSupported(path.Child("httpTokens"), *m.HTTPTokens, []string{"required", "optional"}))
	}
	if m.HTTPPutResponseHopLimit != nil && (*m.HTTPPutResponseHopLimit < 1 || *m.HTTPPutResponseHopLimit > 64) {
		errs = append(errs, field.Invalid(path.Child("httpPutResponseHopLimit"), *m.HTTPPutResponseHopLimit, "must be between 1 and 64"))
	}
	for name, v := range map[string]*string{"httpEndpoint": m.HTTPEndpoint, "httpProtocolIPv6": m.HTTPProtocolIPv6} {
		if v != nil && *v != "enabled" && *v != "disabled" {
			errs = append(errs, field.NotSupported(path.Child(name), *v, []string{"enabled", "disabled"}))
		}
	}
	return errs
}

var reservedResources = []string{"cpu", "memory", "ephemeral-storage", "pid"}

// EvictionSignals are the kubelet eviction signals evictionHard may set.
var EvictionSignals = []string{"memory.available", "nodefs.available", "nodefs.inodesFree", "imagefs.available", "imagefs.inodesFree", "pid.available"}

func validateKubelet(path *field.Path, k *KubeletConfiguration) field.ErrorList {
	var errs field.ErrorList
	if k.MaxPods != nil && *k.MaxPods < 0 {
		errs = append(errs, field.Invalid(path.Child("maxPods"), *k.MaxPods, "must not be negative; leave it unset to use the ENI limit"))
	}
	if k.PodsPerCore != nil && *k.PodsPerCore < 0 {
		errs = append(errs, field.Invalid(path.Child("podsPerCore"), *k.PodsPerCore, "must not be negative; 0 or unset means no per-core cap"))
	}
	for name, m := range map[string]map[string]string{"kubeReserved": k.KubeReserved, "systemReserved": k.SystemReserved} {
		for _, key := range sortedKeys(m) {
			p := path.Child(name).Key(key)
			if !slices.Contains(reservedResources, key) {
				errs = append(errs, field.NotSupported(p, key, reservedResources))
			} else if q, err := resource.ParseQuantity(m[key]); err != nil || q.Sign() < 0 {
				errs = append(errs, field.Invalid(p, m[key], "want a non-negative quantity such as 100m or 1Gi"))
			}
		}
	}
	for _, key := range sortedKeys(k.EvictionHard) {
		p := path.Child("evictionHard").Key(key)
		if !slices.Contains(EvictionSignals, key) {
			errs = append(errs, field.NotSupported(p, key, EvictionSignals))
		} else if !validThreshold(k.EvictionHard[key]) {
			errs = append(errs, field.Invalid(p, k.EvictionHard[key], "want a quantity such as 100Mi or a percentage such as 10%"))
		}
	}
	return errs
}

func validThreshold(v string) bool {
	if pct, ok := strings.CutSuffix(v, "%"); ok {
		f, err := strconv.ParseFloat(pct, 64)
		return err == nil && f >= 0 && f <= 100
	}
	q, err := resource.ParseQuantity(v)
	return err == nil && q.Sign() >= 0
}
