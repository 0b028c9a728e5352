package awsemu

import (
	"encoding/json"
	"fmt"
	"slices"
)

// An EventBridge event pattern, as the EventBridge User Guide's "Event
// patterns" and "Content filtering in event patterns" pages and Event Ruler's
// README (the matcher EventBridge runs) document it:
//   - every field a pattern names must match (AND); "$or" lists two or more
//     patterns of which one must match, at the level it appears;
//   - a field's value is a nested pattern (an object) or a non-empty array of
//     values of which one must match (OR): strings, numbers, true, false,
//     null, or one-key match expressions (prefix, suffix, equals-ignore-case,
//     wildcard, anything-but, numeric, cidr, exists);
//   - an event array matches when one of its elements does, and a nested
//     pattern applied to an array of objects matches when one object does;
//   - comparisons work on leaves only: an object in the event is no value of
//     the field it sits in, so {"exists": false} matches it.
//
// PutRule refuses anything else with InvalidEventPatternException.
type eventPattern struct {
	fields map[string]fieldPattern
	or     []*eventPattern
}

// fieldPattern is one field of a pattern: a nested pattern, or the list of
// matchers of which one must match a leaf value of the field.
type fieldPattern struct {
	nested   *eventPattern
	matchers []matcher
	// exists holds the {"exists": ...} expressions of the list: they are about
	// whether the field has a leaf value, not about one value.
	exists []bool
}

// matcher matches one leaf value of an event: a string, a float64, a bool or nil.
type matcher interface {
	match(v any) bool
}

// orKey is the key of an OR of patterns.
const orKey = "$or"

// operators are the match expressions EventBridge rules accept; none of them
// may be a field name inside "$or".
var operators = []string{"prefix", "suffix", "equals-ignore-case", "wildcard", "anything-but", "numeric", "cidr", "exists"}

// patternError says why a pattern is not valid, and where.
type patternError struct {
	path, reason string
}

func (e *patternError) Error() string {
	if e.path == "" {
		return e.reason
	}
	return e.reason + " at " + e.path
}

func invalid(path, format string, args ...any) error {
	return &patternError{path: path, reason: fmt.Sprintf(format, args...)}
}

// parseEventPattern reads a pattern, as PutRule's EventPattern.
func parseEventPattern(doc string) (*eventPattern, error) {
	var raw any
	if err := json.Unmarshal([]byte(doc), &raw); err != nil {
		return nil, fmt.Errorf("the event pattern is not valid JSON: %v", err)
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, invalid("", "Filter is not an object")
	}
	return compilePattern(obj, "", false)
}

// compilePattern compiles one object of a pattern; inOr says it is an
// alternative of "$or", where operator names are reserved.
func compilePattern(raw map[string]any, path string, inOr bool) (*eventPattern, error) {
	if len(raw) == 0 {
		return nil, invalid(path, "Empty objects are not allowed")
	}
	p := &eventPattern{fields: map[string]fieldPattern{}}
	for _, key := range sortedKeys(raw) {
		at := path + "/" + key
		if key == orKey {
			alts, err := compileOr(raw[key], at)
			if err != nil {
				return nil, err
			}
			p.or = alts
			continue
		}
		if inOr && slices.Contains(operators, key) {
			return nil, invalid(at, "%s is a reserved field name that cannot be used inside $or", key)
		}
		f, err := compileField(raw[key], at, inOr)
		if err != nil {
			return nil, err
		}
		p.fields[key] = f
	}
	return p, nil
}

func compileOr(v any, path string) ([]*eventPattern, error) {
	alts, ok := v.([]any)
	if !ok {
		return nil, invalid(path, "$or must be followed by an array")
	}
	if len(alts) < 2 {
		return nil, invalid(path, "$or must list at least 2 objects")
	}
	out := make([]*eventPattern, 0, len(alts))
	for i, a := range alts {
		obj, ok := a.(map[string]any)
		if !ok {
			return nil, invalid(fmt.Sprintf("%s/%d", path, i), "only JSON objects are allowed in the array of $or")
		}
		alt, err := compilePattern(obj, fmt.Sprintf("%s/%d", path, i), true)
		if err != nil {
			return nil, err
		}
		out = append(out, alt)
	}
	return out, nil
}

func compileField(v any, path string, inOr bool) (fieldPattern, error) {
	switch val := v.(type) {
	case map[string]any:
		nested, err := compilePattern(val, path, inOr)
		return fieldPattern{nested: nested}, err
	case []any:
		if len(val) == 0 {
			return fieldPattern{}, invalid(path, "Empty arrays are not allowed")
		}
		var f fieldPattern
		for i, item := range val {
			if err := f.add(item, fmt.Sprintf("%s/%d", path, i)); err != nil {
				return fieldPattern{}, err
			}
		}
		return f, nil
	}
	return fieldPattern{}, invalid(path, "match values must be an object or an array")
}

// add compiles one value of a field's array.
func (f *fieldPattern) add(item any, path string) error {
	switch it := item.(type) {
	case string, float64, bool, nil:
		f.matchers = append(f.matchers, literal{it})
		return nil
	case map[string]any:
		if len(it) != 1 {
			return invalid(path, "a match expression must have exactly one key, not %d", len(it))
		}
		op := sortedKeys(it)[0]
		if op == "exists" {
			b, ok := it[op].(bool)
			if !ok {
				return invalid(path, "exists match pattern must be either true or false")
			}
			f.exists = append(f.exists, b)
			return nil
		}
		m, err := compileOperator(op, it[op], path+"/"+op)
		if err != nil {
			return err
		}
		f.matchers = append(f.matchers, m)
		return nil
	}
	return invalid(path, "Match value must be String, number, true, false, or null")
}

// matches reports whether the event object (decoded JSON) matches the pattern.
func (p *eventPattern) matches(event map[string]any) bool {
	for key, f := range p.fields {
		v, present := event[key]
		if !f.matchField(v, present) {
			return false
		}
	}
	if len(p.or) == 0 {
		return true
	}
	return slices.ContainsFunc(p.or, func(alt *eventPattern) bool { return alt.matches(event) })
}

func (f fieldPattern) matchField(v any, present bool) bool {
	if f.nested != nil {
		return f.nested.matchesValue(v, present)
	}
	values := leaves(v, present)
	for _, want := range f.exists {
		if want == (len(values) > 0) {
			return true
		}
	}
	for _, m := range f.matchers {
		if slices.ContainsFunc(values, m.match) {
			return true
		}
	}
	return false
}

// matchesValue applies a nested pattern to a field's value: an object, one
// of the objects of an array, or, where there is no object (a missing or
// scalar value), an object without fields, which only {"exists": false} matches.
func (p *eventPattern) matchesValue(v any, present bool) bool {
	objects := objectsOf(v, present)
	if len(objects) == 0 {
		return p.matches(map[string]any{})
	}
	return slices.ContainsFunc(objects, p.matches)
}

// objectsOf is the value if it is an object, or the objects of an array
// (arrays within it flattened).
func objectsOf(v any, present bool) []map[string]any {
	if !present {
		return nil
	}
	switch val := v.(type) {
	case map[string]any:
		return []map[string]any{val}
	case []any:
		var out []map[string]any
		for _, item := range val {
			out = append(out, objectsOf(item, true)...)
		}
		return out
	}
	return nil
}

// leaves are a field's leaf values: the value itself, or the scalars of an
// array (arrays within it flattened); objects are no leaves.
func leaves(v any, present bool) []any {
	if !present {
		return nil
	}
	switch val := v.(type) {
	case map[string]any:
		return nil
	case []any:
		var out []any
		for _, item := range val {
			out = append(out, leaves(item, true)...)
		}
		return out
	}
	return []any{v}
}
