package karpenter

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// placeholder matches the shell-style variables manifests are templated with,
// ${CLUSTER_NAME} or $CLUSTER_NAME, meant for envsubst.
var placeholder = regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$[A-Z_][A-Z0-9_]*`)

// placeholders notes every field of the converted object that still holds a
// placeholder: it is kept as written, and must be substituted before the
// object is applied. User data is left alone: variables there are the
// script's own.
func (c *converter) placeholders(obj any) {
	b, err := json.Marshal(obj)
	if err != nil {
		return
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return
	}
	walkStrings(v, "", func(path, s string) {
		if path == "spec.userData" {
			return
		}
		if found := slices.Compact(placeholder.FindAllString(s, -1)); len(found) > 0 {
			c.note(path, "", "keeps the placeholder %s as written: substitute it (e.g. envsubst) before applying", strings.Join(found, ", "))
			c.out.Notes[len(c.out.Notes)-1].Placeholders = found
		}
	})
}

func walkStrings(v any, path string, f func(path, s string)) {
	switch x := v.(type) {
	case string:
		f(path, x)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if _, isScalar := x[k].(string); isScalar && strings.ContainsAny(k, "./") && path != "" {
				walkStrings(x[k], fmt.Sprintf("%s[%s]", path, k), f)
				continue
			}
			walkStrings(x[k], join(path, k), f)
		}
	case []any:
		for i, item := range x {
			walkStrings(item, fmt.Sprintf("%s[%d]", path, i), f)
		}
	}
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// validate refuses the converted object for each problem Stowage's validation
// finds, on the Karpenter object's line.
func (c *converter) validate(errs field.ErrorList) {
	for _, e := range errs {
		c.refuse(e.Field, "%s", e.ErrorBody())
	}
}
