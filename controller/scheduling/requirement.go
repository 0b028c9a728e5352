package scheduling

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// Requirement is the set of values one label key may take. Every operator maps onto
// one shape: a finite set (In, DoesNotExist as the empty set) or the complement of a
// finite set (NotIn, Exists as the complement of nothing), optionally bounded by
// integer limits (Gt, Lt, Gte, Lte). Intersection stays in the same shape, so any
// mix of operators on one key composes.
type Requirement struct {
	Key string
	// complement means values are excluded rather than allowed.
	complement bool
	values     []string // sorted, unique
	// greaterThan and lessThan are exclusive integer bounds; nil means unbounded.
	greaterThan *int
	lessThan    *int
	// exists means the label must be present (In, Exists, Gt, Lt, Gte, Lte).
	exists bool
	// MinValues asks for at least this many distinct values to remain available.
	MinValues *int
}

// NewRequirement builds a requirement from an operator and its values. Bad integer
// values for Gt, Lt, Gte and Lte yield an empty set (nothing satisfies them);
// validation rejects such input before it gets here.
func NewRequirement(key, operator string, values ...string) *Requirement {
	r := &Requirement{Key: key}
	switch operator {
	case v1alpha1.OperatorIn:
		r.values, r.exists = sortedUnique(values), true
	case v1alpha1.OperatorNotIn:
		r.complement, r.values = true, sortedUnique(values)
	case v1alpha1.OperatorExists:
		r.complement, r.exists = true, true
	case v1alpha1.OperatorDoesNotExist:
	case v1alpha1.OperatorGt, v1alpha1.OperatorGte, v1alpha1.OperatorLt, v1alpha1.OperatorLte:
		return newBound(key, operator, values)
	}
	return r
}

func newBound(key, operator string, values []string) *Requirement {
	r := &Requirement{Key: key, complement: true, exists: true}
	if len(values) != 1 {
		return &Requirement{Key: key, exists: true}
	}
	n, err := strconv.Atoi(values[0])
	if err != nil {
		return &Requirement{Key: key, exists: true}
	}
	switch operator {
	case v1alpha1.OperatorGt:
		r.greaterThan = &n
	case v1alpha1.OperatorGte:
		n--
		r.greaterThan = &n
	case v1alpha1.OperatorLt:
		r.lessThan = &n
	case v1alpha1.OperatorLte:
		n++
		r.lessThan = &n
	}
	return r
}

func sortedUnique(values []string) []string {
	out := slices.Clone(values)
	slices.Sort(out)
	return slices.Compact(out)
}

// Has reports whether the value is allowed.
func (r *Requirement) Has(value string) bool {
	if !r.withinBounds(value) {
		return false
	}
	_, found := slices.BinarySearch(r.values, value)
	return found != r.complement
}

func (r *Requirement) withinBounds(value string) bool {
	if r.greaterThan == nil && r.lessThan == nil {
		return true
	}
	n, err := strconv.Atoi(value)
	if err != nil {
		return false
	}
	return (r.greaterThan == nil || n > *r.greaterThan) && (r.lessThan == nil || n < *r.lessThan)
}

// AllowsAbsent reports whether a node without this label satisfies the requirement:
// true for NotIn and DoesNotExist, false for In, Exists and the integer bounds.
func (r *Requirement) AllowsAbsent() bool {
	return !r.exists
}

// Intersection returns the values both requirements allow; MinValues keeps the larger.
func (r *Requirement) Intersection(o *Requirement) *Requirement {
	out := &Requirement{Key: r.Key, greaterThan: maxBound(r.greaterThan, o.greaterThan), lessThan: minBound(r.lessThan, o.lessThan), exists: r.exists || o.exists}
	out.MinValues = maxBound(r.MinValues, o.MinValues)
	switch {
	case r.complement && o.complement:
		out.complement = true
		out.values = sortedUnique(append(slices.Clone(r.values), o.values...))
	case r.complement:
		out.values = filter(o.values, r.Has)
	case o.complement:
		out.values = filter(r.values, o.Has)
	default:
		out.values = filter(r.values, o.Has)
	}
	if !out.complement {
		out.values = filter(out.values, out.withinBounds)
		out.greaterThan, out.lessThan = nil, nil
	}
	return out
}

// Intersects reports whether some value satisfies both requirements: the same
// answer as !r.Intersection(o).IsEmpty(), without building the intersection.
func (r *Requirement) Intersects(o *Requirement) bool {
	switch {
	case r.complement && o.complement:
		gt, lt := maxBound(r.greaterThan, o.greaterThan), minBound(r.lessThan, o.lessThan)
		return gt == nil || lt == nil || *lt-*gt > 1
	case r.complement:
		return o.anyValue(r.Has)
	default:
		return r.anyValue(o.Has)
	}
}

// anyValue reports whether one of a finite requirement's values passes keep.
func (r *Requirement) anyValue(keep func(string) bool) bool {
	for _, v := range r.values {
		if r.withinBounds(v) && keep(v) {
			return true
		}
	}
	return false
}

func filter(values []string, keep func(string) bool) []string {
	out := make([]string, 0, len(values))
	for _, v := range values {
		if keep(v) {
			out = append(out, v)
		}
	}
	return out
}

func maxBound(a, b *int) *int {
	if a == nil || (b != nil && *b > *a) {
		return b
	}
	return a
}

func minBound(a, b *int) *int {
	if a == nil || (b != nil && *b < *a) {
		return b
	}
	return a
}

// Len is the number of allowed values; math.MaxInt for a complement.
func (r *Requirement) Len() int {
	if r.complement {
		return math.MaxInt
	}
	return len(r.values)
}

// IsEmpty reports whether no value is allowed (the label must be absent).
func (r *Requirement) IsEmpty() bool {
	if r.complement {
		return r.greaterThan != nil && r.lessThan != nil && *r.lessThan-*r.greaterThan <= 1
	}
	return len(r.values) == 0
}

// Values are the allowed values of a finite requirement, sorted.
func (r *Requirement) Values() []string {
	if r.complement {
		return nil
	}
	return r.values
}

// Any returns one allowed value, deterministically, or "" when there is none to name.
func (r *Requirement) Any() string {
	if !r.complement && len(r.values) > 0 {
		return r.values[0]
	}
	if r.greaterThan != nil {
		return strconv.Itoa(*r.greaterThan + 1)
	}
	return ""
}

// Operator renders the requirement's shape as an API operator.
func (r *Requirement) Operator() string {
	switch {
	case r.greaterThan != nil || r.lessThan != nil:
		return "Bounded"
	case r.complement && len(r.values) == 0:
		return v1alpha1.OperatorExists
	case r.complement:
		return v1alpha1.OperatorNotIn
	case len(r.values) == 0 && !r.exists:
		return v1alpha1.OperatorDoesNotExist
	case len(r.values) == 0:
		return "Impossible"
	}
	return v1alpha1.OperatorIn
}

// API renders the requirement as one or more API requirements (a bounded
// requirement needs one per bound).
func (r *Requirement) API() []v1alpha1.NodeSelectorRequirementWithMinValues {
	var out []v1alpha1.NodeSelectorRequirementWithMinValues
	add := func(op string, values ...string) {
		out = append(out, v1alpha1.NodeSelectorRequirementWithMinValues{Key: r.Key, Operator: op, Values: values, MinValues: r.MinValues})
	}
	switch {
	case r.greaterThan != nil && *r.greaterThan < 0:
		// Gte 0 is held as Gt -1, which the API (non-negative values only) cannot write.
		add(v1alpha1.OperatorGte, "0")
	case r.greaterThan != nil:
		add(v1alpha1.OperatorGt, strconv.Itoa(*r.greaterThan))
	}
	if r.lessThan != nil {
		add(v1alpha1.OperatorLt, strconv.Itoa(*r.lessThan))
	}
	if len(out) > 0 && len(r.values) > 0 {
		add(v1alpha1.OperatorNotIn, r.values...)
	}
	if len(out) == 0 {
		add(r.Operator(), slices.Clone(r.values)...)
	}
	return out
}

// String renders the requirement for messages, e.g. "zone In [a b]".
func (r *Requirement) String() string {
	var parts []string
	for _, a := range r.API() {
		if len(a.Values) == 0 {
			parts = append(parts, fmt.Sprintf("%s %s", a.Key, a.Operator))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s [%s]", a.Key, a.Operator, strings.Join(a.Values, " ")))
	}
	return strings.Join(parts, ", ")
}

// SubsetOf reports whether every value r allows, o allows too: narrowing a node's
// requirement r by o would change nothing.
func (r *Requirement) SubsetOf(o *Requirement) bool {
	if o.exists && !r.exists {
		return false
	}
	if !r.complement {
		for _, v := range r.values {
			if !o.Has(v) {
				return false
			}
		}
		return true
	}
	if !o.complement || boundTighter(o.greaterThan, r.greaterThan, 1) || boundTighter(o.lessThan, r.lessThan, -1) {
		return false
	}
	for _, v := range o.values {
		if !slices.Contains(r.values, v) && r.withinBounds(v) {
			return false
		}
	}
	return true
}

// boundTighter reports whether bound a restricts more than b; dir is 1 for lower bounds, -1 for upper.
func boundTighter(a, b *int, dir int) bool {
	if a == nil {
		return false
	}
	if b == nil {
		return true
	}
	return (*a-*b)*dir > 0
}
