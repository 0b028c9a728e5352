package crdschema

import (
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
)

// AttributePath maps a JSON field path (as field.Path prints it, e.g.
// spec.template.spec.requirements[0].values[1] or spec.limits[cpu]) onto the
// Terraform attribute path (requirement[0].values[1], limits["cpu"]). It
// returns the deepest attribute the field lies in, and false when the field is
// above every attribute (the whole object).
func (n *Node) AttributePath(fieldPath string) (path.Path, bool) {
	tokens := tokenize(fieldPath)
	var p path.Path
	found := false
	cur := n
	for len(tokens) > 0 {
		switch cur.Kind {
		case Object:
			child, used := cur.match(tokens)
			if child == nil {
				return p, found
			}
			if found {
				p = p.AtName(child.Name)
			} else {
				p, found = path.Root(child.Name), true
			}
			cur, tokens = child, tokens[used:]
		case ObjectList, StringList:
			i, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(tokens[0], "["), "]"))
			if !isIndex(tokens[0]) || err != nil {
				return p, found
			}
			p, tokens = p.AtListIndex(i), tokens[1:]
			if cur.Kind == StringList {
				return p, found
			}
			cur = &Node{Kind: Object, Children: cur.Children}
		case StringMap:
			if !isIndex(tokens[0]) {
				return p, found
			}
			return p.AtMapKey(tokens[0][1 : len(tokens[0])-1]), found
		default:
			return p, found
		}
	}
	return p, found
}

// match finds the child whose JSON path starts tokens, and how many tokens it used.
func (n *Node) match(tokens []string) (*Node, int) {
	for _, c := range n.Children {
		if len(c.JSON) == 0 || len(c.JSON) > len(tokens) {
			continue
		}
		ok := true
		for i, seg := range c.JSON {
			if tokens[i] != seg {
				ok = false
				break
			}
		}
		if ok {
			return c, len(c.JSON)
		}
	}
	return nil, 0
}

func isIndex(tok string) bool { return strings.HasPrefix(tok, "[") && strings.HasSuffix(tok, "]") }

// tokenize splits a field path into names and bracketed indexes or keys; a
// key may hold dots (spec.kubelet.evictionHard[memory.available]).
func tokenize(s string) []string {
	var out []string
	for s != "" {
		switch s[0] {
		case '.':
			s = s[1:]
		case '[':
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return append(out, s)
			}
			out, s = append(out, s[:end+1]), s[end+1:]
		default:
			end := strings.IndexAny(s, ".[")
			if end < 0 {
				return append(out, s)
			}
			out, s = append(out, s[:end]), s[end:]
		}
	}
	return out
}

// WithoutScalars returns a deep copy of obj without the scalar values at the
// given field paths: the values the API server's rules rejected, which would
// keep the object from decoding into its Go type (a duration such as
// "forever") and so hide the Go validation of everything else.
// It also returns the paths it removed.
func WithoutScalars(obj map[string]any, fieldPaths []string) (map[string]any, []string) {
	cp, _ := deepCopy(obj).(map[string]any)
	var removed []string
	for _, f := range fieldPaths {
		if deleteScalar(cp, tokenize(f)) {
			removed = append(removed, f)
		}
	}
	return cp, removed
}

func deleteScalar(cur any, tokens []string) bool {
	for i, tok := range tokens {
		last := i == len(tokens)-1
		switch c := cur.(type) {
		case map[string]any:
			key := tok
			if isIndex(tok) {
				key = tok[1 : len(tok)-1]
			}
			if last {
				if isScalar(c[key]) {
					delete(c, key)
					return true
				}
				return false
			}
			cur = c[key]
		case []any:
			n, err := strconv.Atoi(strings.Trim(tok, "[]"))
			if err != nil || n >= len(c) || last {
				return false
			}
			cur = c[n]
		default:
			return false
		}
	}
	return false
}

func isScalar(v any) bool {
	switch v.(type) {
	case string, bool, int64, float64, int:
		return true
	}
	return false
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}
