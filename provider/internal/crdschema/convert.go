package crdschema

import (
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Decoded is an object's JSON built from a Terraform value.
type Decoded struct {
	// Object is the JSON object: map[string]any, []any, string, int64, bool.
	Object map[string]any
	// Unknown lists the JSON paths whose values are not known yet (at plan
	// time); they are left out of Object.
	Unknown []*field.Path
}

// ToJSON converts v, a value of the root node's type (or an object with a
// subset of its attributes), into the object's JSON. Null attributes are left
// out, unknown ones recorded.
func (n *Node) ToJSON(v tftypes.Value) (*Decoded, error) {
	d := &Decoded{Object: map[string]any{}}
	if err := n.objectToJSON(v, d.Object, nil, d); err != nil {
		return nil, err
	}
	return d, nil
}

func (n *Node) objectToJSON(v tftypes.Value, out map[string]any, at *field.Path, d *Decoded) error {
	var attrs map[string]tftypes.Value
	if err := v.As(&attrs); err != nil {
		return fmt.Errorf("reading %s: %w", pathString(at), err)
	}
	for _, c := range n.Children {
		av, ok := attrs[c.Name]
		if !ok || len(c.JSON) == 0 || av.IsNull() {
			continue
		}
		p := childPath(at, c.JSON)
		if !av.IsKnown() {
			d.Unknown = append(d.Unknown, p)
			continue
		}
		val, err := c.valueToJSON(av, p, d)
		if err != nil {
			return err
		}
		if val != nil {
			setPath(out, c.JSON, val)
		}
	}
	return nil
}

func (n *Node) valueToJSON(v tftypes.Value, at *field.Path, d *Decoded) (any, error) {
	switch n.Kind {
	case String:
		var s string
		return s, v.As(&s)
	case Bool:
		var b bool
		return b, v.As(&b)
	case Int:
		var f big.Float
		if err := v.As(&f); err != nil {
			return nil, err
		}
		i, _ := f.Int64()
		return i, nil
	case StringList, ObjectList:
		return n.listToJSON(v, at, d)
	case StringMap:
		return stringMapToJSON(v, at, d)
	case Object:
		out := map[string]any{}
		return out, n.objectToJSON(v, out, at, d)
	}
	return nil, fmt.Errorf("%s: unknown kind %d", pathString(at), n.Kind)
}

func (n *Node) listToJSON(v tftypes.Value, at *field.Path, d *Decoded) (any, error) {
	var elems []tftypes.Value
	if err := v.As(&elems); err != nil {
		return nil, fmt.Errorf("reading %s: %w", pathString(at), err)
	}
	if n.Kind == ObjectList && len(elems) == 0 {
		return nil, nil // no blocks: the field is absent
	}
	out := make([]any, 0, len(elems))
	for i, e := range elems {
		p := at.Index(i)
		switch {
		case !e.IsKnown():
			// A placeholder keeps the indexes of the known elements; errors on it are dropped.
			d.Unknown = append(d.Unknown, p)
			out = append(out, placeholder(n.Kind))
		case e.IsNull():
		case n.Kind == StringList:
			var s string
			if err := e.As(&s); err != nil {
				return nil, err
			}
			out = append(out, s)
		default:
			obj := map[string]any{}
			if err := n.objectToJSON(e, obj, p, d); err != nil {
				return nil, err
			}
			out = append(out, obj)
		}
	}
	return out, nil
}

func stringMapToJSON(v tftypes.Value, at *field.Path, d *Decoded) (any, error) {
	var elems map[string]tftypes.Value
	if err := v.As(&elems); err != nil {
		return nil, fmt.Errorf("reading %s: %w", pathString(at), err)
	}
	out := map[string]any{}
	for k, e := range elems {
		if !e.IsKnown() {
			d.Unknown = append(d.Unknown, at.Key(k))
			continue
		}
		var s string
		if err := e.As(&s); err != nil {
			return nil, err
		}
		out[k] = s
	}
	return out, nil
}

// Type is the Terraform type of the node's values.
func (n *Node) Type() tftypes.Type {
	switch n.Kind {
	case String:
		return tftypes.String
	case Int:
		return tftypes.Number
	case Bool:
		return tftypes.Bool
	case StringList:
		return tftypes.List{ElementType: tftypes.String}
	case StringMap:
		return tftypes.Map{ElementType: tftypes.String}
	case ObjectList:
		return tftypes.List{ElementType: n.objectType()}
	}
	return n.objectType()
}

func (n *Node) objectType() tftypes.Object {
	types := map[string]tftypes.Type{}
	for _, c := range n.Children {
		types[c.Name] = c.Type()
	}
	return tftypes.Object{AttributeTypes: types}
}

// FromJSON builds the root node's value from an object's JSON; attributes
// without a JSON path take their value from extra (null when absent there).
func (n *Node) FromJSON(obj map[string]any, extra map[string]tftypes.Value) (tftypes.Value, error) {
	return n.objectFromJSON(obj, extra)
}

func (n *Node) objectFromJSON(obj map[string]any, extra map[string]tftypes.Value) (tftypes.Value, error) {
	attrs := map[string]tftypes.Value{}
	for _, c := range n.Children {
		if len(c.JSON) == 0 {
			v, ok := extra[c.Name]
			if !ok {
				v = tftypes.NewValue(c.Type(), nil)
			}
			attrs[c.Name] = v
			continue
		}
		raw, _ := getPath(obj, c.JSON)
		v, err := c.valueFromJSON(raw)
		if err != nil {
			return tftypes.Value{}, fmt.Errorf("%s: %w", c.Name, err)
		}
		attrs[c.Name] = v
	}
	return tftypes.NewValue(n.objectType(), attrs), nil
}

func (n *Node) valueFromJSON(raw any) (tftypes.Value, error) {
	if raw == nil {
		if n.Kind == ObjectList {
			return tftypes.NewValue(n.Type(), []tftypes.Value{}), nil
		}
		return tftypes.NewValue(n.Type(), nil), nil
	}
	switch n.Kind {
	case String:
		return tftypes.NewValue(tftypes.String, scalarString(raw)), nil
	case Int:
		f, ok := toFloat(raw)
		if !ok {
			return tftypes.Value{}, fmt.Errorf("want a number, got %v", raw)
		}
		return tftypes.NewValue(tftypes.Number, big.NewFloat(f)), nil
	case Bool:
		b, _ := raw.(bool)
		return tftypes.NewValue(tftypes.Bool, b), nil
	case StringMap:
		m, _ := raw.(map[string]any)
		elems := map[string]tftypes.Value{}
		for k, v := range m {
			elems[k] = tftypes.NewValue(tftypes.String, scalarString(v))
		}
		return tftypes.NewValue(n.Type(), elems), nil
	case Object:
		m, _ := raw.(map[string]any)
		return n.objectFromJSON(m, nil)
	}
	return n.listFromJSON(raw)
}

func (n *Node) listFromJSON(raw any) (tftypes.Value, error) {
	items, _ := raw.([]any)
	elems := make([]tftypes.Value, 0, len(items))
	for _, it := range items {
		if n.Kind == StringList {
			elems = append(elems, tftypes.NewValue(tftypes.String, scalarString(it)))
			continue
		}
		m, _ := it.(map[string]any)
		v, err := n.objectFromJSON(m, nil)
		if err != nil {
			return tftypes.Value{}, err
		}
		elems = append(elems, v)
	}
	return tftypes.NewValue(n.Type(), elems), nil
}

// scalarString renders an int-or-string (a quantity written as a number) as
// the string Terraform holds.
func scalarString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case float64:
		return big.NewFloat(x).Text('f', -1)
	case int64:
		return fmt.Sprint(x)
	}
	return fmt.Sprint(v)
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

func decodeJSON(raw []byte) (any, error) {
	var v any
	err := json.Unmarshal(raw, &v)
	return v, err
}

func setPath(obj map[string]any, p []string, v any) {
	for _, seg := range p[:len(p)-1] {
		next, ok := obj[seg].(map[string]any)
		if !ok {
			next = map[string]any{}
			obj[seg] = next
		}
		obj = next
	}
	obj[p[len(p)-1]] = v
}

func getPath(obj map[string]any, p []string) (any, bool) {
	var cur any = obj
	for _, seg := range p {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[seg]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func childPath(at *field.Path, segs []string) *field.Path {
	if at == nil {
		return field.NewPath(segs[0], segs[1:]...)
	}
	return at.Child(segs[0], segs[1:]...)
}

func pathString(p *field.Path) string {
	if p == nil {
		return "the object"
	}
	return p.String()
}

func placeholder(k Kind) any {
	if k == ObjectList {
		return map[string]any{}
	}
	return ""
}
