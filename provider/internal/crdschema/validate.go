package crdschema

import (
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/stowage-dev/stowage/internal/crdadmission"
)

// Admission is the CRD's admission (internal/crdadmission, shared with the
// controller's tests) with the provider's own pruning of what the server
// defaulted (Prune).
type Admission struct{ *crdadmission.Admission }

// NewAdmission compiles the CRD's schema and rules.
func NewAdmission(crd *apiextensionsv1.CustomResourceDefinition) (*Admission, error) {
	a, err := crdadmission.New(crd)
	if err != nil {
		return nil, err
	}
	return &Admission{a}, nil
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
