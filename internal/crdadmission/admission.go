// Package crdadmission runs in process what the API server runs when an
// object of a CRD is written: structural defaulting, the OpenAPI schema
// (types, enums, patterns, bounds), the CEL rules (x-kubernetes-validations)
// and the pruning of unknown fields. The Terraform provider validates plans
// with it; tests check what Stowage writes against schemas it did not write
// (nodeadm's NodeConfig).
package crdadmission

import (
	"context"
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// Admission is one CRD version's compiled schema and rules.
type Admission struct {
	structural *structuralschema.Structural
	schema     apiservervalidation.SchemaValidator
	cel        *cel.Validator
}

// New compiles the schema and rules of the CRD's only version.
func New(crd *apiextensionsv1.CustomResourceDefinition) (*Admission, error) {
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
	if errs := structuralschema.ValidateStructural(nil, s); len(errs) > 0 {
		return nil, fmt.Errorf("the schema of %s is not structural: %w", crd.Name, errs.ToAggregate())
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

// Unknown returns the paths of the fields the API server's pruning would
// drop from obj (fields the schema does not declare), sorted; obj itself is
// left as it is.
func (a *Admission) Unknown(obj map[string]any) []string {
	cp := runtime.DeepCopyJSON(obj)
	return pruning.PruneWithOptions(cp, a.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
}
