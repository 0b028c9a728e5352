package crdschema

import (
	"math"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// Semantic is how two spellings of a value are compared.
type Semantic string

// The semantic comparisons: a duration written 720h or 720h0m0s, a quantity
// written 1k or 1000, is one value.
const (
	Exact    Semantic = ""
	Duration Semantic = "duration"
	Quantity Semantic = "quantity"
)

// durationUnits is the unit group of the duration rule the API types put on
// every duration field (v1alpha1.NillableDuration and the metav1.Duration
// fields): a field whose CEL rules hold it is a duration.
const durationUnits = "(ns|us|µs|μs|ms|s|m|h)"

func semanticOf(p *apiextensionsv1.JSONSchemaProps) Semantic {
	for _, rule := range p.XValidations {
		if strings.Contains(rule.Rule, durationUnits) {
			return Duration
		}
	}
	if p.XIntOrString && strings.Contains(p.Pattern, "[KMGTPE]i") {
		return Quantity
	}
	return Exact
}

// Equivalent reports whether a and b are two spellings of one value.
func (s Semantic) Equivalent(a, b string) bool {
	if a == b {
		return true
	}
	switch s {
	case Duration:
		x, errX := v1alpha1.ParseDuration(a)
		y, errY := v1alpha1.ParseDuration(b)
		if errX != nil || errY != nil {
			return false
		}
		return (x.Duration == nil) == (y.Duration == nil) && (x.Duration == nil || *x.Duration == *y.Duration)
	case Quantity:
		x, errX := resource.ParseQuantity(a)
		y, errY := resource.ParseQuantity(b)
		return errX == nil && errY == nil && x.Cmp(y) == 0
	}
	return false
}

func bound(f *float64) *int64 {
	if f == nil || *f != math.Trunc(*f) {
		return nil
	}
	v := int64(*f)
	return &v
}

// KeepEquivalent returns plan with every duration or quantity (and every map
// of them) that prior spells differently, but equivalently, set back to
// prior's spelling: the first plan after importing an object written as
// 720h0m0s or 1k, configured as 720h or 1000, is then empty. Terraform
// accepts a planned value equal to the prior one in place of the
// configuration's.
func (n *Node) KeepEquivalent(plan, prior tftypes.Value) (tftypes.Value, error) {
	return tftypes.Transform(plan, func(p *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		node := n.at(p)
		if node == nil || node.Semantic == Exact || !v.IsFullyKnown() || v.IsNull() {
			return v, nil
		}
		was, _, err := tftypes.WalkAttributePath(prior, p)
		old, ok := was.(tftypes.Value)
		if err != nil || !ok || !old.IsFullyKnown() || old.IsNull() || !old.Type().Equal(v.Type()) {
			return v, nil
		}
		if node.equivalent(v, old) {
			return old, nil
		}
		return v, nil
	})
}

func (n *Node) equivalent(a, b tftypes.Value) bool {
	if n.Kind == String {
		var x, y string
		return a.As(&x) == nil && b.As(&y) == nil && n.Semantic.Equivalent(x, y)
	}
	var x, y map[string]tftypes.Value
	if n.Kind != StringMap || a.As(&x) != nil || b.As(&y) != nil || len(x) != len(y) {
		return false
	}
	for k, xv := range x {
		yv, ok := y[k]
		var xs, ys string
		if !ok || xv.As(&xs) != nil || yv.As(&ys) != nil || !n.Semantic.Equivalent(xs, ys) {
			return false
		}
	}
	return true
}

// at is the node of the value at p: an attribute, a block or a map; nil for
// an element of a list or map, or a block list's element.
func (n *Node) at(p *tftypes.AttributePath) *Node {
	cur, elem := n, false
	for _, step := range p.Steps() {
		switch s := step.(type) {
		case tftypes.AttributeName:
			if cur.Kind != Object && (cur.Kind != ObjectList || !elem) {
				return nil
			}
			if cur = cur.Child(string(s)); cur == nil {
				return nil
			}
			elem = false
		case tftypes.ElementKeyInt:
			if cur.Kind != ObjectList || elem {
				return nil
			}
			elem = true
		default:
			return nil
		}
	}
	if elem {
		return nil
	}
	return cur
}
