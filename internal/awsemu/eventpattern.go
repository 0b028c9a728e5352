package awsemu

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

// eventPattern is a parsed EventBridge event pattern: every field it names
// must match (AND); $or lists alternatives. A field's value is either a
// nested pattern, or a list of matchers of which one must match the event's
// value (or any element of an event array).
type eventPattern struct {
	fields map[string]fieldMatch
	or     []eventPattern
}

type fieldMatch struct {
	nested   *eventPattern
	matchers []any // literals (string, float64, bool, nil) and content filters (map[string]any)
}

// parseEventPattern reads a pattern, as PutRule's EventPattern.
func parseEventPattern(doc string) (*eventPattern, error) {
	var raw map[string]any
	if err := json.Unmarshal([]byte(doc), &raw); err != nil {
		return nil, fmt.Errorf("the event pattern is not valid JSON: %v", err)
	}
	return compilePattern(raw)
}

func compilePattern(raw map[string]any) (*eventPattern, error) {
	p := &eventPattern{fields: map[string]fieldMatch{}}
	for key, v := range raw {
		if key == "$or" {
			alts, ok := v.([]any)
			if !ok || len(alts) < 2 {
				return nil, fmt.Errorf("$or must list at least two patterns")
			}
			for _, a := range alts {
				obj, ok := a.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("$or must list patterns")
				}
				alt, err := compilePattern(obj)
				if err != nil {
					return nil, err
				}
				p.or = append(p.or, *alt)
			}
			continue
		}
		switch val := v.(type) {
		case map[string]any:
			nested, err := compilePattern(val)
			if err != nil {
				return nil, err
			}
			p.fields[key] = fieldMatch{nested: nested}
		case []any:
			if len(val) == 0 {
				return nil, fmt.Errorf("empty arrays are not allowed, at %s", key)
			}
			p.fields[key] = fieldMatch{matchers: val}
		default:
			return nil, fmt.Errorf("match values must be in an array, at %s", key)
		}
	}
	return p, nil
}

// matches reports whether the event (decoded JSON) matches the pattern.
func (p *eventPattern) matches(event map[string]any) bool {
	for key, fm := range p.fields {
		v, present := event[key]
		if fm.nested != nil {
			obj, ok := v.(map[string]any)
			if !ok || !fm.nested.matches(obj) {
				return false
			}
			continue
		}
		if !fm.matchValue(v, present) {
			return false
		}
	}
	if len(p.or) == 0 {
		return true
	}
	for i := range p.or {
		if p.or[i].matches(event) {
			return true
		}
	}
	return false
}

func (fm fieldMatch) matchValue(v any, present bool) bool {
	values := []any{v}
	if arr, ok := v.([]any); ok {
		values = arr
	}
	for _, m := range fm.matchers {
		if filter, ok := m.(map[string]any); ok {
			if exists, ok := filter["exists"].(bool); ok {
				if exists == present {
					return true
				}
				continue
			}
		}
		if !present {
			continue
		}
		for _, value := range values {
			if matchOne(m, value) {
				return true
			}
		}
	}
	return false
}

// matchOne matches one event value against a literal or a content filter.
func matchOne(m, value any) bool {
	filter, ok := m.(map[string]any)
	if !ok {
		return literalEqual(m, value)
	}
	s, isString := value.(string)
	for op, arg := range filter {
		switch op {
		case "prefix", "suffix":
			want, fold := stringArg(arg)
			if !isString || !affix(op, s, want, fold) {
				return false
			}
		case "equals-ignore-case":
			want, _ := arg.(string)
			if !isString || !strings.EqualFold(s, want) {
				return false
			}
		case "wildcard":
			want, _ := arg.(string)
			if ok, _ := path.Match(want, s); !isString || !ok {
				return false
			}
		case "anything-but":
			if anythingBut(arg, value) {
				return false
			}
		case "numeric":
			if !numeric(arg, value) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func literalEqual(a, b any) bool {
	if af, ok := a.(float64); ok {
		bf, ok := b.(float64)
		return ok && af == bf
	}
	return a == b
}

// stringArg reads a prefix or suffix argument: a string, or
// {"equals-ignore-case": string}.
func stringArg(arg any) (string, bool) {
	if s, ok := arg.(string); ok {
		return s, false
	}
	if obj, ok := arg.(map[string]any); ok {
		s, _ := obj["equals-ignore-case"].(string)
		return s, true
	}
	return "", false
}

func affix(op, s, want string, fold bool) bool {
	if fold {
		s, want = strings.ToLower(s), strings.ToLower(want)
	}
	if op == "prefix" {
		return strings.HasPrefix(s, want)
	}
	return strings.HasSuffix(s, want)
}

// anythingBut reports whether value is one of the excluded values.
func anythingBut(arg, value any) bool {
	switch a := arg.(type) {
	case []any:
		for _, x := range a {
			if literalEqual(x, value) {
				return true
			}
		}
		return false
	case map[string]any:
		return matchOne(a, value)
	}
	return literalEqual(arg, value)
}

// numeric checks value against [op, number, op, number ...].
func numeric(arg, value any) bool {
	ops, ok := arg.([]any)
	n, isNum := value.(float64)
	if !ok || !isNum || len(ops)%2 != 0 {
		return false
	}
	for i := 0; i < len(ops); i += 2 {
		op, _ := ops[i].(string)
		bound, _ := ops[i+1].(float64)
		var pass bool
		switch op {
		case "<":
			pass = n < bound
		case "<=":
			pass = n <= bound
		case "=":
			pass = n == bound
		case ">=":
			pass = n >= bound
		case ">":
			pass = n > bound
		}
		if !pass {
			return false
		}
	}
	return true
}
