// Package manifest reads Kubernetes objects from a multi-document YAML stream
// as kubectl prints it (documents separated by ---, and List documents), and
// keeps where each object and each of its fields is in the file, so that every
// error can name the line, the object and the field path.
package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"

	yaml3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

// Object is one Kubernetes object of the stream, not yet decoded.
type Object struct {
	APIVersion, Kind string
	// Namespace and Name as written; a reader may default the namespace.
	Namespace, Name string
	// Document is the object's document, from 1; Item its index in a List
	// document, or -1.
	Document, Item int

	json []byte
	// node is the object's mapping; its lines are relative to the document,
	// which starts after offset lines of the file.
	node   *yaml3.Node
	offset int
}

// header is what every object's JSON starts with.
type header struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Items      []json.RawMessage `json:"items"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// Read splits the stream into documents and each List document into its
// items. Documents that hold only comments are skipped. A syntax error names
// its line in the stream.
func Read(r io.Reader) ([]*Object, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading: %w", err)
	}
	docs, err := split(data)
	if err != nil {
		return nil, err
	}
	var out []*Object
	for _, d := range docs {
		objs, err := d.objects()
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// document is one document's text and where it starts.
type document struct {
	index int
	// start is the file line of the document's first line, from 1.
	start int
	text  []byte
}

// split cuts the stream at separator lines ("---", optionally followed by a
// comment), as the API machinery's YAML reader does.
func split(data []byte) ([]document, error) {
	var docs []document
	cur := document{index: 1, start: 1}
	lines := bytes.SplitAfter(data, []byte("\n"))
	for i, line := range lines {
		rest, isSep := bytes.CutPrefix(line, []byte("---"))
		if isSep {
			trimmed := strings.TrimSpace(string(rest))
			if trimmed != "" && !strings.HasPrefix(trimmed, "#") {
				return nil, &Error{Line: i + 1, Detail: fmt.Sprintf("content after the document separator (%q): put it on a line of its own", trimmed)}
			}
			docs = append(docs, cur)
			cur = document{index: cur.index + 1, start: i + 2}
			continue
		}
		cur.text = append(cur.text, line...)
	}
	return append(docs, cur), nil
}

// blank reports whether the document holds only blank lines and comments.
func (d document) blank() bool {
	for _, line := range strings.Split(string(d.text), "\n") {
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
			return false
		}
	}
	return true
}

// objects parses the document: one object, or the items of a List.
func (d document) objects() ([]*Object, error) {
	if d.blank() {
		return nil, nil
	}
	offset, lines := d.start-1, max(bytes.Count(d.text, []byte("\n")), 1)
	if !bytes.HasSuffix(d.text, []byte("\n")) {
		lines = bytes.Count(d.text, []byte("\n")) + 1
	}
	// The converter of the API machinery first: its parser puts syntax errors
	// on the right line, where the node parser's can be one line early.
	js, err := yaml.YAMLToJSON(d.text)
	if err != nil {
		return nil, syntaxError(err, offset, lines)
	}
	var root yaml3.Node
	if err := yaml3.Unmarshal(d.text, &root); err != nil {
		return nil, syntaxError(err, offset, lines)
	}
	node := &root
	if node.Kind == yaml3.DocumentNode && len(node.Content) == 1 {
		node = node.Content[0]
	}
	if node.Kind != yaml3.MappingNode {
		return nil, &Error{Line: node.Line + offset, Detail: "not an object: want a mapping with apiVersion, kind and metadata"}
	}
	obj, h, err := newObject(js, node, offset, d.index, -1)
	if err != nil {
		return nil, err
	}
	if !isList(h, node) {
		return []*Object{obj}, nil
	}
	items := child(node, "items")
	out := make([]*Object, 0, len(h.Items))
	for i, raw := range h.Items {
		item, _, err := newObject(raw, items.Content[i], offset, d.index, i)
		if err != nil {
			return nil, err
		}
		out = append(out, item)
	}
	return out, nil
}

// isList reports whether the document is a List (kind List, or any kind
// ending in List, as kubectl prints PodList) with an items sequence.
func isList(h header, node *yaml3.Node) bool {
	items := child(node, "items")
	return (h.Kind == "List" || strings.HasSuffix(h.Kind, "List")) && items != nil && items.Kind == yaml3.SequenceNode && len(items.Content) == len(h.Items)
}

func newObject(js []byte, node *yaml3.Node, offset, doc, item int) (*Object, header, error) {
	var h header
	if node.Kind != yaml3.MappingNode {
		return nil, h, &Error{Line: node.Line + offset, Detail: "not an object: want a mapping with apiVersion, kind and metadata"}
	}
	o := &Object{Document: doc, Item: item, json: js, node: node, offset: offset}
	if err := json.Unmarshal(js, &h); err != nil {
		return nil, h, o.decodeError(reflect.TypeOf(&h), err)
	}
	o.APIVersion, o.Kind, o.Namespace, o.Name = h.APIVersion, h.Kind, h.Metadata.Namespace, h.Metadata.Name
	return o, h, nil
}

// ID names the object in messages: "Pod web/api-0", "NodePool default".
func (o *Object) ID() string {
	kind := o.Kind
	if kind == "" {
		kind = "object"
	}
	if o.Namespace == "" {
		return kind + " " + o.Name
	}
	return kind + " " + o.Namespace + "/" + o.Name
}

// Line is the object's first line in the file.
func (o *Object) Line() int { return o.node.Line + o.offset }

// JSON is the object as JSON, as the API server would receive it.
func (o *Object) JSON() []byte { return o.json }
