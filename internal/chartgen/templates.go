package chartgen

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// holes are the places of one manifest that values fill: the manifest's
// field is replaced by a token, the object is written as YAML, and each
// token's line becomes its template text.
type holes struct {
	inline map[string]string                     // token -> template expression, on the token's line
	blocks map[string]func(indent string) string // token -> lines replacing the whole line
}

func newHoles() *holes {
	return &holes{inline: map[string]string{}, blocks: map[string]func(string) string{}}
}

// expr is a token standing for an inline template expression.
func (h *holes) expr(e string) string {
	tok := fmt.Sprintf("HELMHOLE%dX", len(h.inline)+len(h.blocks))
	h.inline[tok] = e
	return tok
}

// block is a token whose line is replaced by render(its indentation).
func (h *holes) block(render func(indent string) string) string {
	tok := fmt.Sprintf("HELMHOLE%dX", len(h.inline)+len(h.blocks))
	h.blocks[tok] = render
	return tok
}

// optional is a block: `key:` and the value's YAML, only when the value
// (a .Values path) is set.
func (h *holes) optional(key, value string) string {
	return h.block(func(in string) string {
		return fmt.Sprintf("%s{{- with %s }}\n%s%s:\n%s  {{- toYaml . | nindent %d }}\n%s{{- end }}",
			in, value, in, key, in, len(in)+2, in)
	})
}

// optionalScalar is a block: `key: value` only when the value is set.
func (h *holes) optionalScalar(key, value string) string {
	return h.block(func(in string) string {
		return fmt.Sprintf("%s{{- with %s }}\n%s%s: {{ . }}\n%s{{- end }}", in, value, in, key, in)
	})
}

var tokenLine = regexp.MustCompile(`^(\s*)(- )?(.*?)(HELMHOLE\d+X)(.*)$`)

// render writes obj as YAML and fills the holes.
func (h *holes) render(obj *unstructured.Unstructured) (string, error) {
	data, err := yaml.Marshal(obj.Object)
	if err != nil {
		return "", err
	}
	var out []string
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		m := tokenLine.FindStringSubmatch(line)
		if m == nil {
			out = append(out, line)
			continue
		}
		indent, dash, before, tok, after := m[1], m[2], m[3], m[4], m[5]
		if render, ok := h.blocks[tok]; ok {
			// A block stands for a whole `key: value` line (key given by its
			// maker) or a whole list item, at the line's indentation.
			if after != "" || (dash == "" && before == "") || (dash != "" && before != "") {
				return "", fmt.Errorf("block hole %s on the line %q: it must be a whole key's value or a whole list item", tok, line)
			}
			out = append(out, render(indent))
			continue
		}
		out = append(out, indent+dash+before+h.inline[tok]+after)
	}
	return strings.Join(out, "\n") + "\n", nil
}
