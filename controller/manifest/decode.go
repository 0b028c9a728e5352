package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
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
	if bad := badValues(typ, o.json, ""); len(bad) > 0 {
		errs := make([]error, 0, len(bad))
		for _, b := range bad {
			ft := typeAt(typ, b.path)
			errs = append(errs, o.errorf(b.path, "%s", b.detail(ft)))
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

// badValue is a value its Go type refused, and why.
type badValue struct {
	path string
	raw  json.RawMessage
	err  error
}

var (
	quantityType    = reflect.TypeOf(resource.Quantity{})
	unmarshalerType = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
)

// badValues walks the JSON beside the Go type it decodes into and lists every
// value a type with its own decoding (a quantity, a time, a duration) refuses:
// the JSON decoder reports such a value without saying where it is.
func badValues(typ reflect.Type, raw json.RawMessage, path string) []badValue {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if reflect.PointerTo(typ).Implements(unmarshalerType) {
		if err := json.Unmarshal(raw, reflect.New(typ).Interface()); err != nil {
			return []badValue{{path, raw, err}}
		}
		return nil
	}
	var out []badValue
	switch typ.Kind() {
	case reflect.Struct:
		var fields map[string]json.RawMessage
		if json.Unmarshal(raw, &fields) != nil {
			return nil
		}
		for _, name := range sortedKeys(fields) {
			if ft, ok := fieldType(typ, name); ok {
				out = append(out, badValues(ft, fields[name], join(path, name))...)
			}
		}
	case reflect.Slice:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil
		}
		for i, item := range items {
			out = append(out, badValues(typ.Elem(), item, fmt.Sprintf("%s[%d]", path, i))...)
		}
	case reflect.Map:
		var values map[string]json.RawMessage
		if json.Unmarshal(raw, &values) != nil {
			return nil
		}
		for _, k := range sortedKeys(values) {
			out = append(out, badValues(typ.Elem(), values[k], fmt.Sprintf("%s[%s]", path, k))...)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// detail says what is wrong with a refused value and how to write it.
func (b badValue) detail(typ reflect.Type) string {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ == quantityType {
		return fmt.Sprintf("%s is not a quantity: write e.g. 500m, 2, 4Gi or 512Mi", b.raw)
	}
	return fmt.Sprintf("%s: %v", b.raw, b.err)
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

// typeAt is the Go type at a path badValues produced.
func typeAt(typ reflect.Type, path string) reflect.Type {
	for _, seg := range segments(path) {
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		switch typ.Kind() {
		case reflect.Struct:
			ft, ok := fieldType(typ, seg)
			if !ok {
				return typ
			}
			typ = ft
		case reflect.Slice, reflect.Map:
			typ = typ.Elem()
		}
	}
	return typ
}
