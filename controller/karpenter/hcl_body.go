package karpenter

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
)

// bodyWriter writes an object's values into HCL bodies along the schema,
// recording the JSON paths it used and the variables placeholders became.
type bodyWriter struct {
	vars map[string]string
	used [][]string
	// defaults are the top-level fields left out as the server's defaults, as path = value.
	defaults []string
}

// write writes obj's values for n's children into body; at is obj's path
// from the object's root. At the root, a scalar that holds only what the
// server defaults is left out (serverDefault): the provider plans it. A
// block, block list or map is written even then, as the YAML applied with
// kubectl holds it: the provider keeps, on import, what a field manager wrote.
func (bw *bodyWriter) write(body *hclwrite.Body, n *hclNode, obj map[string]any, at []string) {
	for _, c := range n.children {
		raw, ok := lookup(obj, c.json)
		if !ok || raw == nil {
			continue
		}
		path := append(slices.Clone(at), c.json...)
		if at == nil && c.kind < hclList && c.serverDefault(raw) {
			bw.used = append(bw.used, path)
			if b, err := json.Marshal(raw); err == nil {
				bw.defaults = append(bw.defaults, strings.Join(path, ".")+" = "+string(b))
			}
			continue
		}
		switch c.kind {
		case hclBlock:
			m, _ := raw.(map[string]any)
			bw.write(body.AppendNewBlock(c.name, nil).Body(), c, m, path)
		case hclBlocks:
			items, _ := raw.([]any)
			for i, it := range items {
				m, _ := it.(map[string]any)
				bw.write(body.AppendNewBlock(c.name, nil).Body(), c, m, append(slices.Clone(path), fmt.Sprint(i)))
			}
		default:
			// User data is the script's own: its variables are not placeholders.
			vars := bw.vars
			if c.name == "user_data" {
				vars = nil
			}
			body.SetAttributeRaw(c.name, valueTokens(c.kind, raw, vars))
			bw.used = append(bw.used, path)
		}
	}
}

func lookup(obj map[string]any, p []string) (any, bool) {
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

// valueTokens renders an attribute's value.
func valueTokens(kind hclKind, raw any, vars map[string]string) hclwrite.Tokens {
	switch kind {
	case hclNumber:
		n, _ := raw.(json.Number)
		v, err := cty.ParseNumberVal(n.String())
		if err != nil {
			return stringTokens(fmt.Sprint(raw), vars)
		}
		return hclwrite.TokensForValue(v)
	case hclBool:
		b, _ := raw.(bool)
		return hclwrite.TokensForValue(cty.BoolVal(b))
	case hclList:
		items, _ := raw.([]any)
		elems := make([]hclwrite.Tokens, 0, len(items))
		for _, it := range items {
			elems = append(elems, stringTokens(scalar(it), vars))
		}
		return hclwrite.TokensForTuple(elems)
	case hclMap:
		m, _ := raw.(map[string]any)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		attrs := make([]hclwrite.ObjectAttrTokens, 0, len(keys))
		for _, k := range keys {
			attrs = append(attrs, hclwrite.ObjectAttrTokens{Name: stringTokens(k, vars), Value: stringTokens(scalar(m[k]), vars)})
		}
		return hclwrite.TokensForObject(attrs)
	}
	return stringTokens(scalar(raw), vars)
}

// scalar renders an int-or-string (a quantity written as a number) as text.
func scalar(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

// stringTokens renders s as a quoted string, or as a heredoc when it is
// several lines ending in a newline. With vars, each placeholder becomes a
// reference to a variable (recorded in vars); without, the text is literal.
func stringTokens(s string, vars map[string]string) hclwrite.Tokens {
	var matches [][]int
	if vars != nil {
		matches = placeholder.FindAllStringIndex(s, -1)
	}
	if len(matches) == 0 && strings.Count(s, "\n") > 1 && strings.HasSuffix(s, "\n") {
		return heredocTokens(s)
	}
	out := hclwrite.Tokens{{Type: hclsyntax.TokenOQuote, Bytes: []byte(`"`)}}
	last := 0
	for _, m := range matches {
		name := variableName(s[m[0]:m[1]])
		vars[name] = s[m[0]:m[1]]
		out = append(out, literalTokens(s[last:m[0]])...)
		out = append(out, &hclwrite.Token{Type: hclsyntax.TokenTemplateInterp, Bytes: []byte("${")})
		out = append(out, hclwrite.TokensForTraversal(traversal("var", name))...)
		out = append(out, &hclwrite.Token{Type: hclsyntax.TokenTemplateSeqEnd, Bytes: []byte("}")})
		last = m[1]
	}
	out = append(out, literalTokens(s[last:])...)
	return append(out, &hclwrite.Token{Type: hclsyntax.TokenCQuote, Bytes: []byte(`"`)})
}

// literalTokens is s escaped for a quoted template (${ and %{ doubled).
func literalTokens(s string) hclwrite.Tokens {
	if s == "" {
		return nil
	}
	quoted := hclwrite.TokensForValue(cty.StringVal(s))
	return quoted[1 : len(quoted)-1]
}

// heredocTokens renders a multi-line text as a heredoc, with a delimiter
// that is no line of it, escaping template sequences.
func heredocTokens(s string) hclwrite.Tokens {
	delim := "EOT"
	for i := 2; slices.Contains(strings.Split(s, "\n"), delim); i++ {
		delim = fmt.Sprintf("EOT%d", i)
	}
	body := strings.NewReplacer("${", "$${", "%{", "%%{").Replace(s)
	return hclwrite.Tokens{
		{Type: hclsyntax.TokenOHeredoc, Bytes: []byte("<<" + delim + "\n")},
		{Type: hclsyntax.TokenStringLit, Bytes: []byte(body)},
		{Type: hclsyntax.TokenCHeredoc, Bytes: []byte(delim)},
	}
}

// variableName is the Terraform variable a placeholder becomes:
// ${CLUSTER_NAME} and $CLUSTER_NAME -> cluster_name.
func variableName(p string) string {
	return strings.ToLower(strings.Trim(p, "${}"))
}

func traversal(names ...string) hcl.Traversal {
	t := hcl.Traversal{hcl.TraverseRoot{Name: names[0]}}
	for _, n := range names[1:] {
		t = append(t, hcl.TraverseAttr{Name: n})
	}
	return t
}

func commentTokens(text string) hclwrite.Tokens {
	return hclwrite.Tokens{{Type: hclsyntax.TokenComment, Bytes: []byte(text)}}
}

// leftovers are the values of obj no attribute took, as path = value, other
// than what identifies the object (apiVersion, kind, metadata.name).
func leftovers(obj map[string]any, used [][]string) []string {
	taken := map[string]bool{"apiVersion": true, "kind": true, "metadata.name": true}
	for _, p := range used {
		taken[strings.Join(p, ".")] = true
	}
	var out []string
	var walk func(v any, path []string)
	walk = func(v any, path []string) {
		key := strings.Join(path, ".")
		if taken[key] {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(x[k], append(slices.Clone(path), k))
			}
		case []any:
			for i, it := range x {
				walk(it, append(slices.Clone(path), fmt.Sprint(i)))
			}
		default:
			out = append(out, fmt.Sprintf("%s = %v", key, x))
		}
	}
	walk(obj, nil)
	return out
}
