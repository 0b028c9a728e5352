package awsemu

import "strings"

// wildcardPattern matches strings against a pattern whose only metacharacter is
// "*", which stands for any run of characters, "/" included (EventBridge's
// wildcard filter). "\*" is a literal asterisk and "\\" a backslash; no
// other character may be escaped, and two wildcards may not follow each other.
type wildcardPattern struct {
	// parts are the literal runs between the wildcards: len(parts)-1 wildcards.
	parts []string
}

func compileWildcard(pattern, path string) (matcher, error) {
	var parts []string
	var cur strings.Builder
	lastWasWildcard := false
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '\\':
			if i+1 == len(pattern) || (pattern[i+1] != '*' && pattern[i+1] != '\\') {
				return nil, invalid(path, "Invalid escape character at pos %d: only \\* and \\\\ may be escaped", i)
			}
			i++
			cur.WriteByte(pattern[i])
			lastWasWildcard = false
		case c == '*':
			if lastWasWildcard {
				return nil, invalid(path, "Consecutive wildcard characters at pos %d", i)
			}
			parts = append(parts, cur.String())
			cur.Reset()
			lastWasWildcard = true
		default:
			cur.WriteByte(c)
			lastWasWildcard = false
		}
	}
	return wildcardPattern{parts: append(parts, cur.String())}, nil
}

func (w wildcardPattern) match(v any) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	first, last := w.parts[0], w.parts[len(w.parts)-1]
	if len(w.parts) == 1 {
		return s == first
	}
	if len(s) < len(first)+len(last) || !strings.HasPrefix(s, first) || !strings.HasSuffix(s, last) {
		return false
	}
	// The middle runs, leftmost first, in what lies between the first and the last.
	rest := s[len(first) : len(s)-len(last)]
	for _, part := range w.parts[1 : len(w.parts)-1] {
		i := strings.Index(rest, part)
		if i < 0 {
			return false
		}
		rest = rest[i+len(part):]
	}
	return true
}
