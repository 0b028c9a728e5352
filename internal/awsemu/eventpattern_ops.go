package awsemu

import (
	"net/netip"
	"slices"
	"strings"
)

// compileOperator compiles the match expression {op: arg}.
func compileOperator(op string, arg any, path string) (matcher, error) {
	switch op {
	case "prefix", "suffix":
		s, fold, err := affixArg(op, arg, path)
		return affix{suffix: op == "suffix", want: s, fold: fold}, err
	case "equals-ignore-case":
		s, ok := arg.(string)
		if !ok {
			return nil, invalid(path, "equals-ignore-case match pattern must be a string")
		}
		return equalsIgnoreCase{s}, nil
	case "wildcard":
		s, ok := arg.(string)
		if !ok {
			return nil, invalid(path, "wildcard match pattern must be a string")
		}
		return compileWildcard(s, path)
	case "anything-but":
		return compileAnythingBut(arg, path)
	case "numeric":
		return compileNumeric(arg, path)
	case "cidr":
		s, _ := arg.(string)
		prefix, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, invalid(path, "cidr match pattern must be an IPv4 or IPv6 CIDR block, not %v", arg)
		}
		return cidr{prefix.Masked()}, nil
	}
	return nil, invalid(path, "Unrecognized match type %s", op)
}

// literal matches an equal value; numbers compare as numbers.
type literal struct{ want any }

func (l literal) match(v any) bool { return l.want == v }

// affixArg reads a prefix or suffix argument: a string, or
// {"equals-ignore-case": string}.
func affixArg(op string, arg any, path string) (s string, fold bool, err error) {
	if s, ok := arg.(string); ok {
		return s, false, nil
	}
	if obj, ok := arg.(map[string]any); ok && len(obj) == 1 {
		if s, ok := obj["equals-ignore-case"].(string); ok {
			return s, true, nil
		}
	}
	return "", false, invalid(path, "%s match pattern must be a string or {\"equals-ignore-case\": string}", op)
}

// affix matches strings that begin (or end) with want.
type affix struct {
	suffix, fold bool
	want         string
}

func (a affix) match(v any) bool {
	s, ok := v.(string)
	if !ok || len(s) < len(a.want) {
		return false
	}
	part := s[:len(a.want)]
	if a.suffix {
		part = s[len(s)-len(a.want):]
	}
	if a.fold {
		return strings.EqualFold(part, a.want)
	}
	return part == a.want
}

type equalsIgnoreCase struct{ want string }

func (e equalsIgnoreCase) match(v any) bool {
	s, ok := v.(string)
	return ok && strings.EqualFold(s, e.want)
}

// cidr matches strings that are IP addresses within a block.
type cidr struct{ prefix netip.Prefix }

func (c cidr) match(v any) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	addr, err := netip.ParseAddr(s)
	return err == nil && c.prefix.Contains(addr.Unmap())
}

// anythingBut matches every value the excluded matcher does not; a value
// must be there to be matched at all.
type anythingBut struct{ excluded matcher }

func (a anythingBut) match(v any) bool { return !a.excluded.match(v) }

// compileAnythingBut reads anything-but's argument: a string, a number, a
// non-empty list of strings or of numbers, or one of prefix, suffix (a
// string each), equals-ignore-case and wildcard (a string or a list of them).
func compileAnythingBut(arg any, path string) (matcher, error) {
	switch a := arg.(type) {
	case string, float64:
		return anythingBut{literal{a}}, nil
	case []any:
		m, err := literalList(a, path)
		return anythingBut{m}, err
	case map[string]any:
		if len(a) != 1 {
			return nil, invalid(path, "anything-but takes one match expression, not %d", len(a))
		}
		op := sortedKeys(a)[0]
		m, err := anythingButOperator(op, a[op], path+"/"+op)
		return anythingBut{m}, err
	}
	return nil, invalid(path, "anything-but must be a string, a number, a list of either, or a match expression")
}

func anythingButOperator(op string, arg any, path string) (matcher, error) {
	switch op {
	case "prefix", "suffix":
		s, ok := arg.(string)
		if !ok {
			return nil, invalid(path, "anything-but %s match pattern must be a string (a single one, not a list)", op)
		}
		return affix{suffix: op == "suffix", want: s}, nil
	case "equals-ignore-case", "wildcard":
		var list anyOf
		for _, s := range oneOrMany(arg) {
			m, err := compileOperator(op, s, path)
			if err != nil {
				return nil, err
			}
			list = append(list, m)
		}
		if len(list) == 0 {
			return nil, invalid(path, "anything-but %s must be a string or a non-empty list of strings", op)
		}
		return list, nil
	}
	return nil, invalid(path, "Unsupported anything-but pattern: %s", op)
}

func oneOrMany(arg any) []any {
	if list, ok := arg.([]any); ok {
		return list
	}
	return []any{arg}
}

// literalList is anything-but's list: all strings or all numbers.
func literalList(items []any, path string) (matcher, error) {
	if len(items) == 0 {
		return nil, invalid(path, "Empty arrays are not allowed")
	}
	var list anyOf
	for _, it := range items {
		switch it.(type) {
		case string, float64:
		default:
			return nil, invalid(path, "Inside anything-but list, only strings or numbers are supported")
		}
		if _, isString := it.(string); isString != isStringLiteral(items[0]) {
			return nil, invalid(path, "Inside anything-but list, strings and numbers cannot be mixed")
		}
		list = append(list, literal{it})
	}
	return list, nil
}

func isStringLiteral(v any) bool {
	_, ok := v.(string)
	return ok
}

// anyOf matches what one of its matchers matches.
type anyOf []matcher

func (a anyOf) match(v any) bool {
	return slices.ContainsFunc(a, func(m matcher) bool { return m.match(v) })
}

// numericRange matches numbers within [low, high], each bound open or not.
type numericRange struct {
	low, high         float64
	hasLow, hasHigh   bool
	openLow, openHigh bool
}

func (r numericRange) match(v any) bool {
	n, ok := v.(float64)
	if !ok {
		return false
	}
	if r.hasLow && (n < r.low || (r.openLow && n == r.low)) {
		return false
	}
	return !r.hasHigh || (n < r.high || (!r.openHigh && n == r.high))
}

// compileNumeric reads ["=", n], or a lower bound (">" or ">=") and an upper
// bound ("<" or "<="), either or both, in that order.
func compileNumeric(arg any, path string) (matcher, error) {
	terms, ok := arg.([]any)
	if !ok || len(terms) == 0 || len(terms)%2 != 0 || len(terms) > 4 {
		return nil, invalid(path, "numeric takes [operator, number], or a lower and an upper bound: [\">\", 0, \"<=\", 5]")
	}
	var r numericRange
	for i := 0; i < len(terms); i += 2 {
		op, _ := terms[i].(string)
		n, isNum := terms[i+1].(float64)
		if !isNum {
			return nil, invalid(path, "Value of %v must be numeric", terms[i])
		}
		switch {
		case op == "=" && len(terms) == 2:
			r = numericRange{low: n, high: n, hasLow: true, hasHigh: true}
		case (op == ">" || op == ">=") && i == 0:
			r.low, r.hasLow, r.openLow = n, true, op == ">"
		case (op == "<" || op == "<=") && !r.hasHigh:
			r.high, r.hasHigh, r.openHigh = n, true, op == "<"
		default:
			return nil, invalid(path, "Bad numeric range operator %v: use =, or > or >= then < or <=", terms[i])
		}
	}
	if r.hasLow && r.hasHigh && r.low > r.high {
		return nil, invalid(path, "Bottom must be less than top")
	}
	return r, nil
}
