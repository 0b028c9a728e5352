package v1alpha1

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

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
	errs = append(errs, validateAMIFamily(spec.Child("amiFamily"), in.Spec.AMIFamily, in.Spec.AMISelectorTerms)...)
	if p := in.Spec.InstanceStorePolicy; p != nil && *p != InstanceStorePolicyRAID0 {
		errs = append(errs, field.NotSupported(spec.Child("instanceStorePolicy"), *p, []string{InstanceStorePolicyRAID0}))
	}
	for i, t := range in.Spec.CapacityReservationSelectorTerms {
		errs = append(errs, validateReservationTerm(spec.Child("capacityReservationSelectorTerms").Index(i), t)...)
	}
	return errs
}

// validateAMIFamily checks amiFamily against the alias, which names a family of its own.
func validateAMIFamily(path *field.Path, family *string, terms []AMISelectorTerm) field.ErrorList {
	if family == nil {
		return nil
	}
	if !slices.Contains(AMIFamilyNames, *family) {
		return field.ErrorList{field.NotSupported(path, *family, AMIFamilyNames)}
	}
	for _, t := range terms {
		if t.Alias != "" && *family != AMIFamilyCustom && !strings.HasPrefix(t.Alias, strings.ToLower(*family)+"@") {
			return field.ErrorList{field.Invalid(path, *family, fmt.Sprintf("with an alias, amiFamily must be the alias's family or Custom; remove amiFamily to use %s's", t.Alias))}
		}
	}
	return nil
}

var (
	reservationIDPattern  = regexp.MustCompile(`^cr-[0-9a-z]+$`)
	accountIDPattern      = regexp.MustCompile(`^[0-9]{12}$`)
	instanceMatchCriteria = []string{"open", "targeted"}
)

func validateReservationTerm(path *field.Path, t CapacityReservationSelectorTerm) field.ErrorList {
	var errs field.ErrorList
	switch {
	case len(t.Tags) == 0 && t.ID == "" && t.InstanceMatchCriteria == "":
		errs = append(errs, field.Required(path, "set tags, id or instanceMatchCriteria"))
	case t.ID != "" && (len(t.Tags) > 0 || t.OwnerID != "" || t.InstanceMatchCriteria != ""):
		errs = append(errs, field.Invalid(path.Child("id"), t.ID, "id selects one reservation on its own; remove tags, ownerID and instanceMatchCriteria from this term"))
	}
	if t.ID != "" && !reservationIDPattern.MatchString(t.ID) {
		errs = append(errs, field.Invalid(path.Child("id"), t.ID, "want a reservation id such as cr-0123456789abcdef0"))
	}
	if t.OwnerID != "" && !accountIDPattern.MatchString(t.OwnerID) {
		errs = append(errs, field.Invalid(path.Child("ownerID"), t.OwnerID, "want a 12-digit AWS account id"))
	}
	if t.InstanceMatchCriteria != "" && !slices.Contains(instanceMatchCriteria, t.InstanceMatchCriteria) {
		errs = append(errs, field.NotSupported(path.Child("instanceMatchCriteria"), t.InstanceMatchCriteria, instanceMatchCriteria))
	}
	return append(errs, validateTagValues(path.Child("tags"), t.Tags)...)
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
	errs = append(errs, validateThresholds(path.Child("evictionHard"), k.EvictionHard)...)
	errs = append(errs, validateThresholds(path.Child("evictionSoft"), k.EvictionSoft)...)
	return append(errs, validateKubeletLimits(path, k)...)
}

func validateThresholds(path *field.Path, m map[string]string) field.ErrorList {
	var errs field.ErrorList
	for _, key := range sortedKeys(m) {
		p := path.Key(key)
		if !slices.Contains(EvictionSignals, key) {
			errs = append(errs, field.NotSupported(p, key, EvictionSignals))
		} else if !validThreshold(m[key]) {
			errs = append(errs, field.Invalid(p, m[key], "want a quantity such as 100Mi or a percentage such as 10%"))
		}
	}
	return errs
}

// validateKubeletLimits checks the soft eviction grace periods against their
// thresholds, and the image garbage collection bounds.
func validateKubeletLimits(path *field.Path, k *KubeletConfiguration) field.ErrorList {
	var errs field.ErrorList
	for _, key := range sortedKeys(k.EvictionSoft) {
		if _, ok := k.EvictionSoftGracePeriod[key]; !ok {
			errs = append(errs, field.Invalid(path.Child("evictionSoft").Key(key), k.EvictionSoft[key], "each evictionSoft threshold needs a grace period in evictionSoftGracePeriod, e.g. 1m30s"))
		}
	}
	for _, key := range sortedKeys(k.EvictionSoftGracePeriod) {
		if !slices.Contains(EvictionSignals, key) {
			errs = append(errs, field.NotSupported(path.Child("evictionSoftGracePeriod").Key(key), key, EvictionSignals))
		} else if _, ok := k.EvictionSoft[key]; !ok {
			errs = append(errs, field.Invalid(path.Child("evictionSoftGracePeriod").Key(key), k.EvictionSoftGracePeriod[key].Duration.String(), "each evictionSoftGracePeriod needs its threshold in evictionSoft"))
		}
	}
	if v := k.EvictionMaxPodGracePeriod; v != nil && *v < 0 {
		errs = append(errs, field.Invalid(path.Child("evictionMaxPodGracePeriod"), *v, "must not be negative"))
	}
	for name, v := range map[string]*int32{"imageGCHighThresholdPercent": k.ImageGCHighThresholdPercent, "imageGCLowThresholdPercent": k.ImageGCLowThresholdPercent} {
		if v != nil && (*v < 0 || *v > 100) {
			errs = append(errs, field.Invalid(path.Child(name), *v, "must be between 0 and 100"))
		}
	}
	if hi, lo := k.ImageGCHighThresholdPercent, k.ImageGCLowThresholdPercent; hi != nil && lo != nil && *hi <= *lo {
		errs = append(errs, field.Invalid(path.Child("imageGCHighThresholdPercent"), *hi, fmt.Sprintf("must be above imageGCLowThresholdPercent (%d)", *lo)))
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
