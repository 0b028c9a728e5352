package scheduling

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// Requirements is a conjunction of requirements, one per key.
type Requirements map[string]*Requirement

// NewRequirements builds Requirements from requirements, intersecting any on the same key.
func NewRequirements(reqs ...*Requirement) Requirements {
	out := Requirements{}
	for _, r := range reqs {
		out.Add(r)
	}
	return out
}

// FromAPI builds Requirements from the API form (a NodePool's or a
// NodeClaim's), where Karpenter's well-known keys mean Stowage's.
func FromAPI(reqs []v1alpha1.NodeSelectorRequirementWithMinValues) Requirements {
	out := Requirements{}
	for _, r := range reqs {
		req := NewRequirement(v1alpha1.CanonicalLabelKey(r.Key), r.Operator, r.Values...)
		req.MinValues = r.MinValues
		out.Add(req)
	}
	return out
}

// FromNodeSelector builds Requirements from core node selector requirements.
func FromNodeSelector(reqs []corev1.NodeSelectorRequirement) Requirements {
	out := Requirements{}
	for _, r := range reqs {
		out.Add(NewRequirement(r.Key, string(r.Operator), r.Values...))
	}
	return out
}

// FromLabels builds Requirements that pin each label to its value.
func FromLabels(labels map[string]string) Requirements {
	out := make(Requirements, len(labels))
	for k, v := range labels {
		out.Add(NewRequirement(k, v1alpha1.OperatorIn, v))
	}
	return out
}

// Canonical returns the set with Karpenter's well-known keys written as the
// Stowage keys they stand for (intersecting with a requirement already on
// that key); the set itself when it has none.
func (rs Requirements) Canonical() Requirements {
	var out Requirements
	for k, r := range rs {
		stowage := v1alpha1.CanonicalLabelKey(k)
		if stowage == k {
			continue
		}
		if out == nil {
			out = rs.Copy()
		}
		delete(out, k)
		moved := *r
		moved.Key = stowage
		out.Add(&moved)
	}
	if out == nil {
		return rs
	}
	return out
}

// Add intersects r into the set.
func (rs Requirements) Add(r *Requirement) {
	if existing, ok := rs[r.Key]; ok {
		r = existing.Intersection(r)
	}
	rs[r.Key] = r
}

// Get returns the requirement on a key; a key with no requirement allows anything.
func (rs Requirements) Get(key string) *Requirement {
	if r, ok := rs[key]; ok {
		return r
	}
	return NewRequirement(key, v1alpha1.OperatorExists)
}

// Has reports whether the key is constrained.
func (rs Requirements) Has(key string) bool {
	_, ok := rs[key]
	return ok
}

// Merge returns the intersection of rs and o as a new set.
func (rs Requirements) Merge(o Requirements) Requirements {
	out := make(Requirements, len(rs)+len(o))
	for k, r := range rs {
		out[k] = r
	}
	for _, k := range o.Keys() {
		out.Add(o[k])
	}
	return out
}

// Copy returns a shallow copy; requirements themselves are immutable.
func (rs Requirements) Copy() Requirements {
	out := make(Requirements, len(rs))
	for k, r := range rs {
		out[k] = r
	}
	return out
}

// Keys returns the constrained keys, sorted.
func (rs Requirements) Keys() []string {
	keys := make([]string, 0, len(rs))
	for k := range rs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Compatible checks that a node with requirements rs can satisfy the requirements
// wanted (a pod's, say). A key the node does not define is satisfied only by
// NotIn or DoesNotExist. The error names the first key that conflicts, in key order.
func (rs Requirements) Compatible(wanted Requirements) error {
	for _, key := range wanted.Keys() {
		if err := rs.compatibleKey(wanted[key]); err != nil {
			return err
		}
	}
	return nil
}

func (rs Requirements) compatibleKey(want *Requirement) error {
	have, ok := rs[want.Key]
	if !ok {
		if want.AllowsAbsent() {
			return nil
		}
		return fmt.Errorf("label %s is not set on this node (wants %s)", want.Key, want)
	}
	if want.AllowsAbsent() && have.AllowsAbsent() {
		return nil
	}
	if !have.Intersects(want) {
		return fmt.Errorf("%s conflicts with %s", want, have)
	}
	return nil
}

// Intersects reports whether Compatible would return nil, without building an error.
func (rs Requirements) Intersects(wanted Requirements) bool {
	for key, want := range wanted {
		have, ok := rs[key]
		if !ok {
			if !want.AllowsAbsent() {
				return false
			}
			continue
		}
		if want.AllowsAbsent() && have.AllowsAbsent() {
			continue
		}
		if !have.Intersects(want) {
			return false
		}
	}
	return true
}

// Labels returns the labels the requirements pin to a single value.
func (rs Requirements) Labels() map[string]string {
	out := map[string]string{}
	for k, r := range rs {
		if vals := r.Values(); len(vals) == 1 {
			out[k] = vals[0]
		}
	}
	return out
}

// API renders the set in the API form, sorted by key.
func (rs Requirements) API() []v1alpha1.NodeSelectorRequirementWithMinValues {
	var out []v1alpha1.NodeSelectorRequirementWithMinValues
	for _, k := range rs.Keys() {
		out = append(out, rs[k].API()...)
	}
	return out
}

// String renders the set for messages.
func (rs Requirements) String() string {
	parts := make([]string, 0, len(rs))
	for _, k := range rs.Keys() {
		parts = append(parts, rs[k].String())
	}
	return strings.Join(parts, ", ")
}
