package karpenter

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2/hclwrite"

	"github.com/stowage-dev/stowage/controller/manifest"
)

// HCLWriter writes a Result as Terraform configuration for the Stowage
// provider: a stowage_node_pool or stowage_node_class resource per converted
// object and an import block for each (Terraform 1.5), so that a team moves
// the pools it already runs under Terraform without recreating them (and
// with them every node). Placeholders such as ${CLUSTER_NAME} become
// Terraform variables; what the provider has no attribute for, and what was
// not converted, is a comment with its value; refused and skipped objects
// are comments with the reason.
type HCLWriter struct {
	// File names the input in the comments; Files, when it has an object's
	// source, overrides it (for several files written as one configuration).
	File  string
	Files map[*manifest.Object]string
}

var _ Writer = HCLWriter{}

// Resource types of the provider, by Stowage kind.
var hclResourceTypes = map[string]string{"NodePool": "stowage_node_pool", "NodeClass": "stowage_node_class"}

// Write renders r.
func (h HCLWriter) Write(w io.Writer, r *Result) error {
	resources := hclwrite.NewEmptyFile()
	vars := map[string]string{} // variable -> the placeholder it replaces
	labels := map[string]bool{}
	for _, o := range r.Objects {
		if err := h.writeObject(resources.Body(), o, vars, labels); err != nil {
			return fmt.Errorf("writing %s: %w", o.Source.ID(), err)
		}
	}
	var b bytes.Buffer
	writeVariables(&b, vars)
	b.Write(resources.Bytes())
	for _, group := range []struct {
		what string
		list []Refusal
	}{{"Refused", r.Refusals}, {"Skipped", r.Skipped}} {
		for _, f := range group.list {
			fmt.Fprintf(&b, "\n# %s: %s %s (%s):\n", group.what, f.Source.APIVersion, f.Source.ID(), h.where(f.Source))
			for _, e := range manifest.Leaves(manifest.InFile(h.file(f.Source), f.Err)) {
				hclComment(&b, "  "+e.Error())
			}
		}
	}
	_, err := w.Write(hclwrite.Format(b.Bytes()))
	return err
}

func (h HCLWriter) file(src *manifest.Object) string {
	if f, ok := h.Files[src]; ok {
		return f
	}
	return h.File
}

func (h HCLWriter) where(src *manifest.Object) string {
	if f := h.file(src); f != "" {
		return fmt.Sprintf("%s:%d", f, src.Line())
	}
	return fmt.Sprintf("line %d", src.Line())
}

// writeObject appends one object's comments, resource and import block.
func (h HCLWriter) writeObject(body *hclwrite.Body, o *Object, vars map[string]string, labels map[string]bool) error {
	kind, obj, err := objectJSON(o)
	if err != nil {
		return err
	}
	typ, ok := hclResourceTypes[kind]
	if !ok {
		return fmt.Errorf("the provider has no resource for a %s", kind)
	}
	schema, err := hclSchema(kind)
	if err != nil {
		return err
	}
	name, _ := obj["metadata"].(map[string]any)["name"].(string)
	label := resourceLabel(name, typ, labels)
	var c strings.Builder
	fmt.Fprintf(&c, "\n# Converted from %s %s (%s) by stowage import karpenter.\n", o.Source.APIVersion, o.Source.ID(), h.where(o.Source))
	for _, n := range o.Notes {
		writeNote(&c, n)
	}
	// The object as the API server holds it, which is what an import reads.
	obj = applyDefaults(obj, schema.props).(map[string]any)
	block := hclwrite.NewBlock("resource", []string{typ, label})
	bw := bodyWriter{vars: vars}
	bw.write(block.Body(), schema, obj, nil)
	for _, d := range bw.defaults {
		hclComment(&c, d+": left out: the API server gives it this value when it is absent")
	}
	for _, left := range leftovers(obj, bw.used) {
		hclComment(&c, left+": the provider has no attribute for it; the object keeps it when imported, and Terraform leaves it alone")
	}
	body.AppendUnstructuredTokens(commentTokens(c.String()))
	body.AppendBlock(block)
	body.AppendNewline()
	imp := body.AppendNewBlock("import", nil).Body()
	imp.SetAttributeTraversal("to", traversal(typ, label))
	imp.SetAttributeRaw("id", stringTokens(name, nil))
	return nil
}

// writeNote writes a conversion note as comments: a placeholder as the
// variable it became, anything else as the YAML writer does.
func writeNote(b *strings.Builder, n Note) {
	if len(n.Placeholders) > 0 {
		var become []string
		for _, p := range n.Placeholders {
			become = append(become, p+" is var."+variableName(p))
		}
		hclComment(b, n.Field+": "+strings.Join(become, ", "))
		return
	}
	hclComment(b, n.Field+": "+n.Message)
	if n.Value != "" {
		hclComment(b, "  was: "+n.Value)
	}
}

// HCLWarnings are an object's warnings as the HCL writer leaves them: a
// placeholder is a variable to set, not text to substitute.
func HCLWarnings(o *Object) []*manifest.Error {
	var out []*manifest.Error
	for _, n := range o.Notes {
		switch {
		case n.Quiet:
		case len(n.Placeholders) > 0:
			var vs []string
			for _, p := range n.Placeholders {
				vs = append(vs, fmt.Sprintf("%s is var.%s", p, variableName(p)))
			}
			out = append(out, o.Source.Errorf(n.Field, "%s: set it when applying (-var or a .tfvars file)", strings.Join(vs, ", ")))
		default:
			out = append(out, o.Source.Errorf(n.Field, "%s", n.Message))
		}
	}
	return out
}

// objectJSON is the converted object's kind and JSON, as the YAML writer writes it.
func objectJSON(o *Object) (string, map[string]any, error) {
	m, err := objectMap(o)
	if err != nil {
		return "", nil, err
	}
	kind, _ := m["kind"].(string)
	return kind, m, nil
}

// writeVariables declares the variables placeholders became.
func writeVariables(b *bytes.Buffer, vars map[string]string) {
	names := make([]string, 0, len(vars))
	for n := range vars {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		f := hclwrite.NewEmptyFile()
		v := f.Body().AppendNewBlock("variable", []string{n}).Body()
		v.SetAttributeRaw("description", stringTokens(fmt.Sprintf("Stands for %s, the placeholder of the Karpenter manifests (what envsubst would substitute).", vars[n]), nil))
		v.SetAttributeTraversal("type", traversal("string"))
		b.Write(f.Bytes())
		b.WriteString("\n")
	}
}

var labelUnsafe = regexp.MustCompile(`[^A-Za-z0-9_]`)

// resourceLabel turns an object name into a Terraform resource name, unique
// per type: web-spot -> web_spot; a leading digit gets an underscore.
func resourceLabel(name, typ string, used map[string]bool) string {
	label := labelUnsafe.ReplaceAllString(name, "_")
	if label == "" || label[0] >= '0' && label[0] <= '9' {
		label = "_" + label
	}
	base := label
	for i := 2; used[typ+"."+label]; i++ {
		label = fmt.Sprintf("%s_%d", base, i)
	}
	used[typ+"."+label] = true
	return label
}

func hclComment(b interface{ WriteString(string) (int, error) }, text string) {
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		_, _ = b.WriteString(strings.TrimRight("# "+line, " ") + "\n")
	}
}
