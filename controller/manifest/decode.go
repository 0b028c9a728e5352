package manifest

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	yaml3 "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/api/resource"
	kjson "sigs.k8s.io/json"
)

// Decode decodes the object into a typed value as the API server's strict
// field validation does: an unknown or duplicate field, a value of the wrong
// type and a malformed quantity are each an Error naming the field and its
// line. Every such problem is reported, joined.
func (o *Object) Decode(into any) error {
	unknown, err := o.DecodeLenient(into)
	errs := make([]error, 0, len(unknown)+1)
	for _, u := range unknown {
		errs = append(errs, u)
	}
	if err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// DecodeLenient decodes like Decode but returns unknown and duplicate fields
// apart, as Errors, for a caller that reports them as warnings (a newer
// version's field); err is a problem that leaves the value unusable.
func (o *Object) DecodeLenient(into any) (unknown []*Error, err error) {
	for _, d := range duplicates(o.node, "") {
		e := o.errorf(d.path, "duplicate field; remove one of them")
		e.Line = d.line + o.offset
		unknown = append(unknown, e)
	}
	strict, err := kjson.UnmarshalStrict(o.json, into, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	for _, s := range strict {
		unknown = append(unknown, o.strictError(s))
	}
	if err != nil {
		return unknown, o.decodeError(reflect.TypeOf(into), err)
	}
	return unknown, nil
}

// strictError turns an unknown or duplicate field error into an Error.
func (o *Object) strictError(err error) *Error {
	var fe kjson.FieldError
	if errors.As(err, &fe) {
		path := fe.FieldPath()
		if strings.HasPrefix(err.Error(), "duplicate field") {
			return o.errorf(path, "duplicate field; remove one of them")
		}
		return o.errorf(path, "unknown field %q: check its spelling and indentation against the %s schema", lastName(path), o.Kind)
	}
	return o.errorf("", "%v", err)
}

func lastName(path string) string {
	segs := segments(path)
	if len(segs) == 0 {
		return path
	}
	return segs[len(segs)-1]
}

var typeErr = regexp.MustCompile(`^json: cannot unmarshal (\S+) into Go struct field [^.]*\.(\S+) of type (.+)$`)

// decodeError places a decoding failure on its field: a type error through
// the path JSON names, a quantity through the schema of into.
func (o *Object) decodeError(typ reflect.Type, err error) error {
	if m := typeErr.FindStringSubmatch(err.Error()); m != nil {
		detail := fmt.Sprintf("a %s where %s is wanted", m[1], m[3])
		if m[1] == "bool" && m[3] == "string" {
			detail += " (YAML reads y, n, yes, no, on and off as booleans: quote the value)"
		}
		path, _, line, ok := findLoose(o.node, segments(m[2]), "", jsonKind(m[1]))
		if !ok {
			path, _, line, ok = findLoose(o.node, segments(m[2]), "", nil)
		}
		if !ok {
			return o.errorf(m[2], "%s", detail)
		}
		e := o.errorf("", "%s", detail)
		e.Field, e.Line = path, line+o.offset
		return e
	}
	if bad := badQuantities(typ, o.node, ""); len(bad) > 0 {
		errs := make([]error, 0, len(bad))
		for _, b := range bad {
			errs = append(errs, o.errorf(b.path, "%q is not a quantity: write e.g. 500m, 2, 4Gi or 512Mi", b.value))
		}
		return errors.Join(errs...)
	}
	return o.errorf("", "decoding %s: %v", o.Kind, err)
}

// duplicate is a key written again in one mapping, and the line of the repeat.
type duplicate struct {
	path string
	line int
}

// duplicates lists the keys written twice in one mapping.
func duplicates(node *yaml3.Node, prefix string) []duplicate {
	var out []duplicate
	switch node.Kind {
	case yaml3.MappingNode:
		seen := map[string]bool{}
		for i := 0; i+1 < len(node.Content); i += 2 {
			key := node.Content[i].Value
			p := join(prefix, key)
			if seen[key] {
				out = append(out, duplicate{p, node.Content[i].Line})
			}
			seen[key] = true
			out = append(out, duplicates(node.Content[i+1], p)...)
		}
	case yaml3.SequenceNode:
		for i, item := range node.Content {
			out = append(out, duplicates(item, fmt.Sprintf("%s[%d]", prefix, i))...)
		}
	}
	return out
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

type badQuantity struct{ path, value string }

var quantityType = reflect.TypeOf(resource.Quantity{})

// badQuantities walks the YAML beside the Go type it decodes into and lists
// every string in a quantity's place that does not parse as one: the JSON
// decoder reports such a value without saying where it is.
func badQuantities(typ reflect.Type, node *yaml3.Node, path string) []badQuantity {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if node == nil || node.Kind == yaml3.AliasNode {
		return nil
	}
	switch {
	case typ == quantityType:
		if node.Kind != yaml3.ScalarNode {
			return []badQuantity{{path, "(not a scalar)"}}
		}
		if _, err := resource.ParseQuantity(node.Value); err != nil {
			return []badQuantity{{path, node.Value}}
		}
		return nil
	case typ.Kind() == reflect.Struct && node.Kind == yaml3.MappingNode:
		var out []badQuantity
		for i := 0; i+1 < len(node.Content); i += 2 {
			if ft, ok := fieldType(typ, node.Content[i].Value); ok {
				out = append(out, badQuantities(ft, node.Content[i+1], join(path, node.Content[i].Value))...)
			}
		}
		return out
	case typ.Kind() == reflect.Slice && node.Kind == yaml3.SequenceNode:
		var out []badQuantity
		for i, item := range node.Content {
			out = append(out, badQuantities(typ.Elem(), item, fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	case typ.Kind() == reflect.Map && node.Kind == yaml3.MappingNode:
		var out []badQuantity
		for i := 0; i+1 < len(node.Content); i += 2 {
			out = append(out, badQuantities(typ.Elem(), node.Content[i+1], fmt.Sprintf("%s[%s]", path, node.Content[i].Value))...)
		}
		return out
	}
	return nil
}

// fieldType is the type of the struct field JSON calls name, looking through
// inlined and embedded structs as encoding/json does.
func fieldType(typ reflect.Type, name string) (reflect.Type, bool) {
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" {
			continue
		}
		inline := (f.Anonymous && tag == "") || strings.Contains(","+opts+",", ",inline,")
		if inline {
			inner := f.Type
			for inner.Kind() == reflect.Pointer {
				inner = inner.Elem()
			}
			if inner.Kind() == reflect.Struct {
				if ft, ok := fieldType(inner, name); ok {
					return ft, true
				}
			}
			continue
		}
		if tag == "" {
			tag = f.Name
		}
		if tag == name {
			return f.Type, true
		}
	}
	return nil, false
}
