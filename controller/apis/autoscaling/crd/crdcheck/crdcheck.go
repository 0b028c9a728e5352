// Package crdcheck checks Go types against a CRD's OpenAPI schema, for the
// tests of the wire-compatible types written to upstream CRDs.
package crdcheck

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var (
	quantityType = reflect.TypeFor[resource.Quantity]()
	timeType     = reflect.TypeFor[metav1.Time]()
)

// Walk compares one schema node with one Go type, both ways: every
// property has a field of the same JSON name and kind, every field a
// property, and a required property is never omitted when empty.
func Walk(t *testing.T, path string, s apiextensionsv1.JSONSchemaProps, typ reflect.Type) {
	t.Helper()
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	switch {
	case typ == quantityType:
		if !s.XIntOrString {
			t.Errorf("%s: a quantity in Go, not an int-or-string in the CRD", path)
		}
	case typ == timeType:
		if s.Type != "string" || s.Format != "date-time" {
			t.Errorf("%s: a time in Go, %s/%s in the CRD", path, s.Type, s.Format)
		}
	case typ.Kind() == reflect.Struct:
		walkStruct(t, path, s, typ)
	case typ.Kind() == reflect.Map:
		if s.Type != "object" || s.AdditionalProperties == nil || s.AdditionalProperties.Schema == nil {
			t.Errorf("%s: a map in Go, not an object of additionalProperties in the CRD", path)
			return
		}
		Walk(t, path+"[*]", *s.AdditionalProperties.Schema, typ.Elem())
	case typ.Kind() == reflect.Slice:
		if s.Type != "array" || s.Items == nil || s.Items.Schema == nil {
			t.Errorf("%s: a list in Go, %s in the CRD", path, s.Type)
			return
		}
		Walk(t, path+"[]", *s.Items.Schema, typ.Elem())
	default:
		want := map[reflect.Kind]string{reflect.String: "string", reflect.Int32: "integer/int32", reflect.Int64: "integer/int64"}[typ.Kind()]
		got := s.Type
		if s.Type == "integer" {
			got += "/" + s.Format
		}
		if got != want {
			t.Errorf("%s: %s in Go (%s), %s in the CRD", path, typ, want, got)
		}
	}
}

func walkStruct(t *testing.T, path string, s apiextensionsv1.JSONSchemaProps, typ reflect.Type) {
	t.Helper()
	if s.Type != "object" || len(s.Properties) == 0 {
		t.Errorf("%s: a struct in Go, %s without properties in the CRD", path, s.Type)
		return
	}
	seen := map[string]bool{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		prop, ok := s.Properties[name]
		if !ok {
			t.Errorf("%s.%s: a field in Go, not in the CRD", path, name)
			continue
		}
		seen[name] = true
		if slices.Contains(s.Required, name) && strings.Contains(opts, "omitempty") && f.Type.Kind() != reflect.Struct {
			t.Errorf("%s.%s: required in the CRD, omitted when empty in Go", path, name)
		}
		Walk(t, path+"."+name, prop, f.Type)
	}
	for name := range s.Properties {
		if !seen[name] {
			t.Errorf("%s.%s: in the CRD, no field in Go", path, name)
		}
	}
}
