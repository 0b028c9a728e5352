package crdschema

import (
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// ResourceSchema returns the attributes and blocks of the root node's
// children; own supplies the definitions of the provider's own attributes
// (nodes without a JSON path, and any it defines itself, such as name).
func (n *Node) ResourceSchema(description string, own map[string]schema.Attribute) (schema.Schema, error) {
	attrs, blocks, err := n.members(own)
	if err != nil {
		return schema.Schema{}, err
	}
	return schema.Schema{MarkdownDescription: description, Attributes: attrs, Blocks: blocks}, nil
}

func (n *Node) members(own map[string]schema.Attribute) (map[string]schema.Attribute, map[string]schema.Block, error) {
	attrs, blocks := map[string]schema.Attribute{}, map[string]schema.Block{}
	for _, c := range n.Children {
		if a, ok := own[c.Name]; ok {
			attrs[c.Name] = a
			continue
		}
		if len(c.JSON) == 0 {
			return nil, nil, fmt.Errorf("attribute %s has no JSON path and no definition", c.Name)
		}
		switch c.Kind {
		case Object, ObjectList:
			b, err := c.block()
			if err != nil {
				return nil, nil, err
			}
			blocks[c.Name] = b
		default:
			attrs[c.Name] = c.attribute()
		}
	}
	return attrs, blocks, nil
}

func (n *Node) block() (schema.Block, error) {
	src := n
	if n.Kind == Object && !n.Required {
		src = n.withOptionalChildren()
	}
	attrs, blocks, err := src.members(nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", n.Name, err)
	}
	if n.Kind == Object {
		return schema.SingleNestedBlock{MarkdownDescription: n.Markdown(), Attributes: attrs, Blocks: blocks}, nil
	}
	return schema.ListNestedBlock{MarkdownDescription: n.Markdown(),
		NestedObject: schema.NestedBlockObject{Attributes: attrs, Blocks: blocks}}, nil
}

// withOptionalChildren is an optional object whose fields Terraform need not
// see set: absent, the block is null and its fields with it (Terraform would
// otherwise require them of an absent block). A present block missing a
// field the CRD requires fails validation against the CRD, at plan time.
func (n *Node) withOptionalChildren() *Node {
	out := *n
	out.Children = make([]*Node, len(n.Children))
	for i, c := range n.Children {
		cc := *c
		if cc.Required {
			cc.Required, cc.Description = false, strings.TrimSpace(cc.Description+" Required in the block.")
		}
		out.Children[i] = &cc
	}
	return &out
}

func (n *Node) attribute() schema.Attribute {
	optional := !n.Required
	computed := n.Default != nil
	desc := n.Markdown()
	switch n.Kind {
	case Int:
		a := schema.Int64Attribute{MarkdownDescription: desc, Required: n.Required, Optional: optional, Computed: computed}
		if d, ok := n.Default.(int64); ok {
			a.Default = int64default.StaticInt64(d)
		}
		return a
	case Bool:
		a := schema.BoolAttribute{MarkdownDescription: desc, Required: n.Required, Optional: optional, Computed: computed}
		if d, ok := n.Default.(bool); ok {
			a.Default = booldefault.StaticBool(d)
		}
		return a
	case StringList:
		return schema.ListAttribute{MarkdownDescription: desc, Required: n.Required, Optional: optional, ElementType: types.StringType}
	case StringMap:
		return schema.MapAttribute{MarkdownDescription: desc, Required: n.Required, Optional: optional, ElementType: types.StringType}
	}
	a := schema.StringAttribute{MarkdownDescription: desc, Required: n.Required, Optional: optional, Computed: computed}
	if d, ok := n.Default.(string); ok {
		a.Default = stringdefault.StaticString(d)
	}
	return a
}

// Markdown is the node's description with its allowed values, its range and
// its default, all taken from the CRD: the bounds and enums the API server
// (and so the plan-time Admission) validates against.
func (n *Node) Markdown() string {
	text := n.Description
	if len(n.Enum) > 0 {
		text = sentence(text) + "One of " + codeList(n.Enum) + "."
	}
	switch {
	case n.Minimum != nil && n.Maximum != nil:
		text = sentence(text) + fmt.Sprintf("From %d to %d.", *n.Minimum, *n.Maximum)
	case n.Minimum != nil:
		text = sentence(text) + fmt.Sprintf("At least %d.", *n.Minimum)
	case n.Maximum != nil:
		text = sentence(text) + fmt.Sprintf("At most %d.", *n.Maximum)
	}
	if n.Default != nil {
		text = sentence(text) + fmt.Sprintf("Defaults to `%v`.", n.Default)
	}
	return text
}

func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s + " "
}

func codeList(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = "`" + v + "`"
	}
	return strings.Join(quoted, ", ")
}
