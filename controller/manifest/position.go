package manifest

import (
	"strconv"
	"strings"

	yaml3 "go.yaml.in/yaml/v3"
)

// child is the value of key in a mapping node, or nil.
func child(node *yaml3.Node, key string) *yaml3.Node {
	if node == nil || node.Kind != yaml3.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		if node.Content[i].Value == key {
			return node.Content[i+1]
		}
	}
	return nil
}

// segments splits a field path such as spec.requirements[0].values or
// spec.limits[cpu] into its names and bracketed keys or indices.
func segments(path string) []string {
	var out []string
	for path != "" {
		switch {
		case path[0] == '.':
			path = path[1:]
		case path[0] == '[':
			end := strings.IndexByte(path, ']')
			if end < 0 {
				return append(out, path[1:])
			}
			out = append(out, path[1:end])
			path = path[end+1:]
		default:
			end := strings.IndexAny(path, ".[")
			if end < 0 {
				end = len(path)
			}
			out = append(out, path[:end])
			path = path[end:]
		}
	}
	return out
}

// LineOf is the file line of the field at path: the line of its key (or of
// its list item), or of the nearest enclosing field that is written when the
// field itself is not (a missing required field). The object's first line
// for an empty path.
func (o *Object) LineOf(path string) int {
	node, line := o.node, o.node.Line
	for _, seg := range segments(path) {
		next, at := step(node, seg)
		if next == nil {
			break
		}
		node, line = next, at
	}
	return line + o.offset
}

// step moves into a mapping by key or a sequence by index; it returns the
// value and the line where the step is written (the key's, for a mapping).
func step(node *yaml3.Node, seg string) (*yaml3.Node, int) {
	switch node.Kind {
	case yaml3.MappingNode:
		for i := 0; i+1 < len(node.Content); i += 2 {
			if node.Content[i].Value == seg {
				return node.Content[i+1], node.Content[i].Line
			}
		}
	case yaml3.SequenceNode:
		if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(node.Content) {
			return node.Content[i], node.Content[i].Line
		}
	}
	return nil, 0
}

// findLoose resolves a path whose list indices are left out (spec.containers.ports.containerPort,
// as JSON type errors name fields) to the first field it can be, with the indices put in.
// want, when not nil, picks the value among the candidates.
func findLoose(node *yaml3.Node, segs []string, prefix string, want func(*yaml3.Node) bool) (string, *yaml3.Node, int, bool) {
	if len(segs) == 0 {
		return prefix, node, node.Line, want == nil || want(node)
	}
	switch node.Kind {
	case yaml3.MappingNode:
		for i := 0; i+1 < len(node.Content); i += 2 {
			if node.Content[i].Value == segs[0] {
				p := segs[0]
				if prefix != "" {
					p = prefix + "." + segs[0]
				}
				if path, n, line, ok := findLoose(node.Content[i+1], segs[1:], p, want); ok {
					if len(segs) == 1 {
						line = node.Content[i].Line
					}
					return path, n, line, true
				}
			}
		}
	case yaml3.SequenceNode:
		for i, item := range node.Content {
			if path, n, line, ok := findLoose(item, segs, prefix+"["+strconv.Itoa(i)+"]", want); ok {
				return path, n, line, true
			}
		}
	}
	return "", nil, 0, false
}

// jsonKind picks the YAML values that decode to a JSON value of the kind a
// type error names ("string", "number", "bool", "object", "array").
func jsonKind(kind string) func(*yaml3.Node) bool {
	kind, _, _ = strings.Cut(kind, " ")
	return func(n *yaml3.Node) bool {
		switch kind {
		case "object":
			return n.Kind == yaml3.MappingNode
		case "array":
			return n.Kind == yaml3.SequenceNode
		case "string":
			return n.Kind == yaml3.ScalarNode && n.ShortTag() == "!!str"
		case "number":
			return n.Kind == yaml3.ScalarNode && (n.ShortTag() == "!!int" || n.ShortTag() == "!!float")
		case "bool":
			return n.Kind == yaml3.ScalarNode && n.ShortTag() == "!!bool"
		}
		return true
	}
}
