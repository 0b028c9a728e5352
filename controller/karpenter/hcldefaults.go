package karpenter

import (
	"bytes"
	"encoding/json"
	"reflect"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// serverDefault reports whether a top-level field of an object, as the API
// server holds it (defaulted), is exactly what the server's defaulting gives
// when the field is absent (expireAfter at 720h, say): a scalar at its
// default is what the provider plans anyway, and is left out.
func (n *hclNode) serverDefault(raw any) bool {
	if n.props == nil {
		return false
	}
	absent := defaultOf(n.props)
	return absent != nil && reflect.DeepEqual(normalizeJSON(raw), normalizeJSON(absent))
}

// defaultOf is what the server gives a field of schema p when it is absent:
// its default, itself defaulted; nil when it has none.
func defaultOf(p *apiextensionsv1.JSONSchemaProps) any {
	if p.Default == nil {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(p.Default.Raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return nil
	}
	return applyDefaults(v, p)
}

// applyDefaults fills in v the defaults of p's properties, recursively, as
// the API server's structural defaulting does.
func applyDefaults(v any, p *apiextensionsv1.JSONSchemaProps) any {
	switch x := v.(type) {
	case map[string]any:
		for name, prop := range p.Properties {
			if _, ok := x[name]; !ok {
				if d := defaultOf(&prop); d != nil {
					x[name] = d
				}
			}
			if child, ok := x[name]; ok {
				x[name] = applyDefaults(child, &prop)
			}
		}
	case []any:
		if p.Items != nil && p.Items.Schema != nil {
			for i := range x {
				x[i] = applyDefaults(x[i], p.Items.Schema)
			}
		}
	}
	return v
}

// normalizeJSON makes numbers comparable whatever their Go type.
func normalizeJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalizeJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalizeJSON(e)
		}
		return out
	case json.Number:
		f, _ := x.Float64()
		return f
	case int64:
		return float64(x)
	case int:
		return float64(x)
	}
	return v
}
