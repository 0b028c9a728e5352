package karpenter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/stowage-dev/stowage/controller/manifest"
)

// YAMLWriter writes a Result as a multi-document stream of Stowage objects,
// each after comments that say where it came from and what was not carried
// over (with the values left out), and refused and skipped objects as
// comments with the reason.
type YAMLWriter struct {
	// File names the input in the comments.
	File string
}

var _ Writer = YAMLWriter{}

// Write renders r.
func (y YAMLWriter) Write(w io.Writer, r *Result) error {
	var b strings.Builder
	for _, o := range r.Objects {
		body, err := objectYAML(o)
		if err != nil {
			return fmt.Errorf("writing %s: %w", o.Source.ID(), err)
		}
		b.WriteString("---\n")
		fmt.Fprintf(&b, "# Converted from %s %s (%s) by stowage import karpenter.\n", o.Source.APIVersion, o.Source.ID(), y.where(o.Source.Line()))
		for _, n := range o.Notes {
			comment(&b, n.Field+": "+n.Message)
			if n.Value != "" {
				comment(&b, "  was: "+n.Value)
			}
		}
		b.Write(body)
	}
	for _, group := range []struct {
		what string
		list []Refusal
	}{{"Refused", r.Refusals}, {"Skipped", r.Skipped}} {
		for _, f := range group.list {
			b.WriteString("---\n")
			fmt.Fprintf(&b, "# %s: %s %s (%s):\n", group.what, f.Source.APIVersion, f.Source.ID(), y.where(f.Source.Line()))
			for _, e := range manifest.Leaves(manifest.InFile(y.File, f.Err)) {
				comment(&b, "  "+e.Error())
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (y YAMLWriter) where(line int) string {
	if y.File == "" {
		return fmt.Sprintf("line %d", line)
	}
	return fmt.Sprintf("%s:%d", y.File, line)
}

// comment writes text as YAML comment lines.
func comment(b *strings.Builder, text string) {
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		b.WriteString(strings.TrimRight("# "+line, " ") + "\n")
	}
}

// objectYAML renders the converted object without the empty status and
// creation time a typed object marshals.
func objectYAML(o *Object) ([]byte, error) {
	m, err := objectMap(o)
	if err != nil {
		return nil, err
	}
	return yaml.Marshal(m)
}

// objectMap is the converted object's JSON, numbers kept exact, without the
// empty status, structs and creation time a typed object marshals.
func objectMap(o *Object) (map[string]any, error) {
	var obj any = o.NodePool
	switch {
	case o.NodeClass != nil:
		obj = o.NodeClass
	case o.NodeClaim != nil:
		obj = o.NodeClaim
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	if meta, ok := m["metadata"].(map[string]any); ok && meta["creationTimestamp"] == nil {
		delete(meta, "creationTimestamp")
	}
	pruneEmpty(m)
	return m, nil
}

// pruneEmpty removes the empty objects a typed object marshals for its unset
// structs (status: {}, disruption: {}), which the API server defaults alike.
func pruneEmpty(m map[string]any) {
	for k, v := range m {
		if child, ok := v.(map[string]any); ok {
			pruneEmpty(child)
			if len(child) == 0 {
				delete(m, k)
			}
		}
	}
}
