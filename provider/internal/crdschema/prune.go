package crdschema

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
)

// Prune removes from obj, an object as read from the server, the values the
// server filled in where prior (what Terraform last planned; nil on import)
// has nothing: a block, a block list or a map whose value is exactly what the
// API server's defaulting gives when it is absent. Scalars with a schema
// default are kept, since Terraform plans them. This is how a pool written
// without a disruption block reads back without one, and so plans no diff.
func (a *Admission) Prune(root *Node, obj, prior map[string]any) {
	a.prune(root, obj, obj, prior, nil, nil)
}

// PruneImported is Prune for an object read without a prior value (an
// import), which keeps the values a field manager wrote, default or not
// (written reports whether the field at a JSON path of names was): what its
// author wrote explicitly is what a configuration written from the same
// source declares, and what nobody wrote is the server's default.
func (a *Admission) PruneImported(root *Node, obj map[string]any, written func(path []string) bool) {
	a.prune(root, obj, obj, nil, nil, written)
}

// prune works on the object at (whole's) path at, whose value is cur, with
// the prior value at the same place.
func (a *Admission) prune(n *Node, whole, cur, prior map[string]any, at []any, written func([]string) bool) {
	for _, c := range n.Children {
		if len(c.JSON) == 0 || c.Default != nil {
			continue
		}
		val, ok := getPath(cur, c.JSON)
		if !ok {
			continue
		}
		full := append(append([]any{}, at...), toAny(c.JSON)...)
		was, had := getPath(prior, c.JSON)
		if !had || isEmpty(was) {
			if written != nil && written(names(full)) {
				continue
			}
			if reflect.DeepEqual(normalize(val), normalize(a.defaultAt(whole, full))) {
				deletePath(cur, c.JSON)
			}
			continue
		}
		a.pruneChild(c, whole, val, was, full, written)
	}
}

func (a *Admission) pruneChild(c *Node, whole map[string]any, val, was any, full []any, written func([]string) bool) {
	switch c.Kind {
	case Object:
		m, _ := val.(map[string]any)
		pm, _ := was.(map[string]any)
		a.prune(c, whole, m, pm, full, written)
	case ObjectList:
		items, _ := val.([]any)
		priorItems, _ := was.([]any)
		if len(items) != len(priorItems) {
			return
		}
		for i := range items {
			m, _ := items[i].(map[string]any)
			pm, _ := priorItems[i].(map[string]any)
			a.prune(c, whole, m, pm, append(append([]any{}, full...), i), written)
		}
	}
}

// defaultAt is the value the server gives the field at full when it is absent.
func (a *Admission) defaultAt(whole map[string]any, full []any) any {
	cp := runtime.DeepCopyJSON(toJSONCompatible(whole))
	parent, last := walk(cp, full[:len(full)-1]), full[len(full)-1]
	m, ok := parent.(map[string]any)
	if !ok {
		return nil
	}
	delete(m, last.(string))
	a.Default(cp)
	return walk(cp, full)
}

func walk(v any, p []any) any {
	for _, seg := range p {
		switch s := seg.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[s]
		case int:
			l, ok := v.([]any)
			if !ok || s >= len(l) {
				return nil
			}
			v = l[s]
		}
	}
	return v
}

func deletePath(obj map[string]any, p []string) {
	for _, seg := range p[:len(p)-1] {
		next, ok := obj[seg].(map[string]any)
		if !ok {
			return
		}
		obj = next
	}
	delete(obj, p[len(p)-1])
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case []any:
		return len(x) == 0
	}
	return false
}

// names keeps the field names of a path, up to its first list index.
func names(p []any) []string {
	var out []string
	for _, seg := range p {
		s, ok := seg.(string)
		if !ok {
			break
		}
		out = append(out, s)
	}
	return out
}

func toAny(p []string) []any {
	out := make([]any, len(p))
	for i, s := range p {
		out[i] = s
	}
	return out
}

// toJSONCompatible turns int into int64 so that DeepCopyJSON accepts the object.
func toJSONCompatible(v map[string]any) map[string]any {
	out, _ := convertInts(v).(map[string]any)
	return out
}

func convertInts(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = convertInts(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = convertInts(e)
		}
		return out
	case int:
		return int64(x)
	}
	return v
}

// normalize makes numbers comparable whatever their Go type.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalize(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case int64:
		return float64(x)
	case int:
		return float64(x)
	}
	return v
}
