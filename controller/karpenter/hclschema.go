package karpenter

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/stowage-dev/stowage/controller/apis/crds"
)

// hclKind says how a schema node is written in HCL.
type hclKind int

const (
	hclString hclKind = iota // strings and int-or-strings (quantities)
	hclNumber
	hclBool
	hclList // of strings
	hclMap  // of strings
	hclBlock
	hclBlocks // repeated blocks, one per list item
)

// hclNode is one attribute or block of the Terraform provider's schema of a
// kind. It is built from the CRD by the provider's own mapping
// (provider/internal/crdschema: snake_case names, a list of objects becomes
// repeated blocks with a singular name, wrapper objects are flattened), which
// the stowage binary cannot import without linking the plugin framework; the
// CLI test of the written HCL compares the two schemas path by path.
type hclNode struct {
	name     string
	json     []string // from the parent object; several segments when flattened
	kind     hclKind
	children []*hclNode
	// props is the field's schema in the CRD, for its defaults.
	props *apiextensionsv1.JSONSchemaProps
}

// hclMapping is the provider's Spec for a kind: what is flattened, left out or renamed.
type hclMapping struct {
	crd     string
	flatten []string
	exclude []string
	names   map[string]string
}

var hclMappings = map[string]hclMapping{
	"NodePool": {crd: "nodepools.stowage.dev",
		flatten: []string{"spec", "spec.template", "spec.template.metadata", "spec.template.spec"},
		exclude: []string{"spec.template.spec.taints.timeAdded", "spec.template.spec.startupTaints.timeAdded"}},
	"NodeClass": {crd: "nodeclasses.stowage.dev", flatten: []string{"spec"},
		names: map[string]string{"spec.metadataOptions.httpProtocolIPv6": "http_protocol_ipv6"}},
}

// hclSchema returns the root node of kind's schema (its children are the
// resource's attributes and blocks, name first).
func hclSchema(kind string) (*hclNode, error) {
	m, ok := hclMappings[kind]
	if !ok {
		return nil, fmt.Errorf("no Terraform resource for kind %s", kind)
	}
	all, err := crds.CRDs()
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(all, func(c *apiextensionsv1.CustomResourceDefinition) bool { return c.Name == m.crd })
	if i < 0 || len(all[i].Spec.Versions) != 1 || all[i].Spec.Versions[0].Schema == nil {
		return nil, fmt.Errorf("no schema for CRD %s", m.crd)
	}
	spec := all[i].Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	props := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": spec}}
	children, err := m.fields(&props, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("mapping %s onto HCL: %w", kind, err)
	}
	name := &hclNode{name: "name", json: []string{"metadata", "name"}, kind: hclString}
	return &hclNode{kind: hclBlock, children: append([]*hclNode{name}, children...), props: &props}, nil
}

func (m hclMapping) fields(props *apiextensionsv1.JSONSchemaProps, full, rel []string) ([]*hclNode, error) {
	keys := make([]string, 0, len(props.Properties))
	for k := range props.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []*hclNode
	for _, k := range keys {
		p := props.Properties[k]
		f, r := append(slices.Clone(full), k), append(slices.Clone(rel), k)
		key := strings.Join(f, ".")
		if slices.Contains(m.exclude, key) {
			continue
		}
		if slices.Contains(m.flatten, key) {
			inner, err := m.fields(&p, f, r)
			if err != nil {
				return nil, err
			}
			out = append(out, inner...)
			continue
		}
		n, err := m.node(&p, f, r)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

func (m hclMapping) node(p *apiextensionsv1.JSONSchemaProps, full, rel []string) (*hclNode, error) {
	last := full[len(full)-1]
	n := &hclNode{json: rel, props: p}
	switch {
	case p.XIntOrString || p.Type == "string":
		n.kind = hclString
	case p.Type == "integer":
		n.kind = hclNumber
	case p.Type == "boolean":
		n.kind = hclBool
	case p.Type == "array" && p.Items != nil && p.Items.Schema != nil && p.Items.Schema.Type == "string":
		n.kind = hclList
	case p.Type == "array" && p.Items != nil && p.Items.Schema != nil && p.Items.Schema.Type == "object":
		n.kind, last = hclBlocks, strings.TrimSuffix(last, "s")
		children, err := m.fields(p.Items.Schema, full, nil)
		if err != nil {
			return nil, err
		}
		n.children = children
	case p.Type == "object" && p.AdditionalProperties != nil:
		n.kind = hclMap
	case p.Type == "object":
		n.kind = hclBlock
		children, err := m.fields(p, full, nil)
		if err != nil {
			return nil, err
		}
		n.children = children
	default:
		return nil, fmt.Errorf("%s: type %q has no HCL form", strings.Join(full, "."), p.Type)
	}
	n.name = snake(last)
	if override, ok := m.names[strings.Join(full, ".")]; ok {
		n.name = override
	}
	return n, nil
}

// snake turns a JSON name into the provider's snake_case: nodeClassRef ->
// node_class_ref, kmsKeyID -> kms_key_id.
func snake(s string) string {
	var b strings.Builder
	r := []rune(s)
	for i, c := range r {
		upper := c >= 'A' && c <= 'Z'
		if upper && i > 0 {
			prevLower := r[i-1] >= 'a' && r[i-1] <= 'z' || r[i-1] >= '0' && r[i-1] <= '9'
			nextLower := i+1 < len(r) && r[i+1] >= 'a' && r[i+1] <= 'z'
			prevUpper := r[i-1] >= 'A' && r[i-1] <= 'Z'
			if prevLower || (prevUpper && nextLower) {
				b.WriteByte('_')
			}
		}
		b.WriteString(strings.ToLower(string(c)))
	}
	return b.String()
}

// paths lists the schema's attribute and block paths (requirement.min_values),
// for the test that holds it against the provider's.
func (n *hclNode) paths(prefix string) []string {
	var out []string
	for _, c := range n.children {
		p := c.name
		if prefix != "" {
			p = prefix + "." + c.name
		}
		out = append(out, p)
		out = append(out, c.paths(p)...)
	}
	return out
}
