package crdschema

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// Admission runs, in process, what the API server runs when an object of the
// CRD is written: structural defaulting, the OpenAPI schema (types, enums,
// patterns, bounds) and the CEL rules (x-kubernetes-validations).
type Admission struct {
	structural *structuralschema.Structural
	schema     apiservervalidation.SchemaValidator
	cel        *cel.Validator
}

// NewAdmission compiles the CRD's schema and rules.
func NewAdmission(crd *apiextensionsv1.CustomResourceDefinition) (*Admission, error) {
	if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Schema == nil {
		return nil, fmt.Errorf("compiling %s: want exactly one version with a schema", crd.Name)
	}
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, internal, nil); err != nil {
		return nil, fmt.Errorf("converting the schema of %s: %w", crd.Name, err)
	}
	s, err := structuralschema.NewStructural(internal)
	if err != nil {
		return nil, fmt.Errorf("reading the structural schema of %s: %w", crd.Name, err)
	}
	v, _, err := apiservervalidation.NewSchemaValidator(internal)
	if err != nil {
		return nil, fmt.Errorf("compiling the schema of %s: %w", crd.Name, err)
	}
	return &Admission{structural: s, schema: v, cel: cel.NewValidator(s, true, celconfig.PerCallLimit)}, nil
}

// Default fills obj's defaults as the API server would.
func (a *Admission) Default(obj map[string]any) { structuraldefaulting.Default(obj, a.structural) }

// Validate defaults obj and returns what the API server's schema and CEL
// rules reject, each error on its field path.
func (a *Admission) Validate(ctx context.Context, obj map[string]any) field.ErrorList {
	a.Default(obj)
	errs := apiservervalidation.ValidateCustomResource(nil, obj, a.schema)
	if a.cel != nil {
		celErrs, _ := a.cel.Validate(ctx, nil, a.structural, obj, nil, celconfig.RuntimeCELCostBudget)
		errs = append(errs, celErrs...)
	}
	return errs
}

// Problem is one validation error, ready to become a diagnostic.
type Problem struct {
	// Field is the JSON path of the field, e.g. spec.template.spec.requirements[0].key.
	Field string
	// Message says what is wrong and how to fix it.
	Message string
}

// Problems merges the errors of the Go validation (goErrs, whose messages
// name the bad value and the fix) with the API server's (apiErrs, whose
// rules they mirror): an API server error is dropped where a Go error
// already covers its field or a field below it, and every error touching a
// value not yet known is dropped. Exact duplicates go.
func Problems(goErrs, apiErrs field.ErrorList, unknown []*field.Path) []Problem {
	var out []Problem
	seen := map[Problem]bool{}
	add := func(p Problem) {
		if !seen[p] && !touchesUnknown(p.Field, unknown) {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, e := range goErrs {
		add(Problem{Field: e.Field, Message: e.ErrorBody()})
	}
	for _, e := range apiErrs {
		if coveredBy(e.Field, goErrs) {
			continue
		}
		add(Problem{Field: e.Field, Message: apiMessage(e)})
	}
	return out
}

// apiMessage drops the placeholder value ("object", "string") a CEL rule's
// error carries.
func apiMessage(e *field.Error) string {
	e = &field.Error{Type: e.Type, Field: e.Field, BadValue: e.BadValue, Detail: strings.TrimPrefix(e.Detail, e.Field+" in body ")}
	if e.Type == field.ErrorTypeInvalid && e.Detail != "" {
		if s, ok := e.BadValue.(string); ok && (s == "object" || s == "string" || s == "array" || s == "integer") {
			return e.Detail
		}
	}
	return e.ErrorBody()
}

func coveredBy(f string, errs field.ErrorList) bool {
	for _, e := range errs {
		if related(f, e.Field) && len(e.Field) >= len(f) {
			return true
		}
	}
	return false
}

func touchesUnknown(f string, unknown []*field.Path) bool {
	for _, u := range unknown {
		if related(f, u.String()) {
			return true
		}
	}
	return false
}

// related reports whether one field path is the other or lies under it.
func related(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	return a == b || a == "" || strings.HasPrefix(b, a+".") || strings.HasPrefix(b, a+"[")
}

// Unrelated keeps the errors whose field is neither one of fields nor above or below one.
func Unrelated(errs field.ErrorList, fields []string) field.ErrorList {
	var out field.ErrorList
	for _, e := range errs {
		keep := true
		for _, f := range fields {
			if related(e.Field, f) && f != "" {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, e)
		}
	}
	return out
}
