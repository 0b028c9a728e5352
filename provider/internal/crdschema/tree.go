// Package crdschema turns a Stowage CustomResourceDefinition into a Terraform
// schema, and converts between Terraform values and the object's JSON. The CRD
// (controller/apis/crds, generated from controller/apis/v1alpha1) is the one
// source of the schema's shape, types, defaults and descriptions, so that the
// provider cannot fall out of step with the API types.
//
// HCL names are the JSON names in snake_case; a list of objects becomes
// repeated blocks with a singular name (requirements -> requirement), a nested
// object a single block. Wrapper objects a user never thinks about
// (spec.template.spec) are flattened into their parent.
package crdschema

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Kind says what a Node holds.
type Kind int

// Node kinds: scalars and collections of strings are attributes, objects and
// lists of objects are blocks.
const (
	String Kind = iota
	Int
	Bool
	StringList
	StringMap
	Object     // a single nested block
	ObjectList // repeated blocks
)

// Node is one attribute or block of the schema.
type Node struct {
	// Name is the HCL name.
	Name string
	// JSON is the path from the parent object's JSON to this value: one segment,
	// several when wrapper objects were flattened, none for attributes the
	// provider adds that the object does not carry.
	JSON []string
	Kind Kind
	// Children are the attributes and blocks of an Object or ObjectList.
	Children []*Node
	// Required is set for a field the CRD requires and does not default.
	Required bool
	// Default is the CRD's default of a scalar (a string, int64 or bool), else nil.
	Default any
	// Description is the field's documentation, for the schema's MarkdownDescription.
	Description string
	// Enum lists the allowed values of a string, or of a list's strings.
	Enum []string
	// Minimum and Maximum bound an integer, when the CRD does.
	Minimum, Maximum *int64
	// Semantic says how two spellings of a string (or of a map's values)
	// are compared: as durations, as quantities, or exactly ("").
	Semantic Semantic
}

// Spec says how a CRD maps onto a resource.
type Spec struct {
	// Flatten lists the JSON paths (dot-separated, from the object root) of
	// objects whose fields become their parent's.
	Flatten []string
	// Exclude lists JSON paths left out of the schema, each with why.
	Exclude map[string]string
	// Names overrides the snake_case name of a JSON path where the rule reads badly.
	Names map[string]string
	// Descriptions document JSON paths the API types leave undocumented.
	Descriptions map[string]string
}

// Build returns the root Node of crd's served version: an Object whose children
// are the flattened fields of the object, with extra (provider-only) nodes first.
func Build(crd *apiextensionsv1.CustomResourceDefinition, spec Spec, extra ...*Node) (*Node, error) {
	if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Schema == nil {
		return nil, fmt.Errorf("building the schema of %s: want exactly one version with a schema", crd.Name)
	}
	root := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	b := builder{spec: spec}
	props := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": root.Properties["spec"]}, Required: []string{"spec"}}
	children, err := b.fields(&props, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("building the schema of %s: %w", crd.Name, err)
	}
	return &Node{Kind: Object, Children: append(extra, children...)}, nil
}

type builder struct{ spec Spec }

// fields returns the children of the object props at jsonPath; relPath is the
// path from the nearest object that is not flattened.
func (b builder) fields(props *apiextensionsv1.JSONSchemaProps, jsonPath, relPath []string) ([]*Node, error) {
	var out []*Node
	for _, name := range sortedKeys(props.Properties) {
		p := props.Properties[name]
		full, rel := appendPath(jsonPath, name), appendPath(relPath, name)
		key := strings.Join(full, ".")
		if _, skip := b.spec.Exclude[key]; skip {
			continue
		}
		if slices.Contains(b.spec.Flatten, key) {
			inner, err := b.fields(&p, full, rel)
			if err != nil {
				return nil, err
			}
			out = append(out, inner...)
			continue
		}
		n, err := b.node(&p, full, rel, slices.Contains(props.Required, name))
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, checkNames(out)
}

func (b builder) node(p *apiextensionsv1.JSONSchemaProps, full, rel []string, required bool) (*Node, error) {
	key := strings.Join(full, ".")
	last := full[len(full)-1]
	n := &Node{JSON: rel, Description: b.description(key, p), Required: required && p.Default == nil}
	switch {
	case p.XIntOrString || p.Type == "string":
		n.Kind, n.Enum, n.Semantic = String, enum(p), semanticOf(p)
	case p.Type == "integer":
		n.Kind, n.Minimum, n.Maximum = Int, bound(p.Minimum), bound(p.Maximum)
	case p.Type == "boolean":
		n.Kind = Bool
	case p.Type == "array" && p.Items != nil && p.Items.Schema != nil && p.Items.Schema.Type == "string":
		n.Kind, n.Enum = StringList, enum(p.Items.Schema)
	case p.Type == "array" && p.Items != nil && p.Items.Schema != nil && p.Items.Schema.Type == "object":
		n.Kind, last = ObjectList, strings.TrimSuffix(last, "s")
		children, err := b.fields(p.Items.Schema, full, nil)
		if err != nil {
			return nil, err
		}
		n.Children = children
	case p.Type == "object" && p.AdditionalProperties != nil:
		n.Kind = StringMap
		if p.AdditionalProperties.Schema != nil {
			n.Semantic = semanticOf(p.AdditionalProperties.Schema)
		}
	case p.Type == "object":
		n.Kind = Object
		children, err := b.fields(p, full, nil)
		if err != nil {
			return nil, err
		}
		n.Children = children
	default:
		return nil, fmt.Errorf("%s: type %q has no Terraform mapping; exclude it or map it", key, p.Type)
	}
	n.Name = snake(last)
	if override, ok := b.spec.Names[key]; ok {
		n.Name = override
	}
	if err := n.setDefault(p); err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return n, nil
}

// setDefault keeps the CRD default of a scalar; object and list defaults are
// the server's business (see Prune).
func (n *Node) setDefault(p *apiextensionsv1.JSONSchemaProps) error {
	if p.Default == nil || n.Kind > Bool {
		return nil
	}
	v, err := decodeJSON(p.Default.Raw)
	if err != nil {
		return err
	}
	switch x := v.(type) {
	case string, bool:
		n.Default = x
	case float64:
		n.Default = int64(x)
	default:
		return fmt.Errorf("default %s has no Terraform mapping", p.Default.Raw)
	}
	return nil
}

func (b builder) description(key string, p *apiextensionsv1.JSONSchemaProps) string {
	if text := strings.Join(strings.Fields(p.Description), " "); text != "" {
		return text
	}
	return b.spec.Descriptions[key]
}

func enum(p *apiextensionsv1.JSONSchemaProps) []string {
	var out []string
	for _, e := range p.Enum {
		if v, err := decodeJSON(e.Raw); err == nil {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

func checkNames(nodes []*Node) error {
	seen := map[string]bool{}
	for _, n := range nodes {
		if seen[n.Name] {
			return fmt.Errorf("two fields map onto the HCL name %q; set a name override", n.Name)
		}
		seen[n.Name] = true
	}
	return nil
}

// Child returns the child named name, or nil.
func (n *Node) Child(name string) *Node {
	for _, c := range n.Children {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func appendPath(p []string, s string) []string {
	return append(slices.Clone(p), s)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// snake turns a JSON name into snake_case: nodeClassRef -> node_class_ref,
// kmsKeyID -> kms_key_id, associatePublicIPAddress -> associate_public_ip_address.
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
