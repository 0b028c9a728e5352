// Package userdatacheck judges the user data Stowage writes with parsers
// and schemas its writer does not use: every NodeConfig document
// (node.eks.aws/v1alpha1, what an AL2023 node's nodeadm reads) against
// nodeadm's published schema, as the API server would check an object of a
// CRD, with structural validation (types, formats, enums) and pruning
// (fields the schema does not declare, which nodeadm's decoder drops
// silently); every Bottlerocket document with a TOML parser. Tests and the
// bed's kubelet call it; Stowage's writer never does.
package userdatacheck

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/stowage-dev/stowage/internal/crdadmission"
)

// CRD is nodeadm's NodeConfig CRD as published (testdata/README.md names its source).
//
//go:embed testdata/node.eks.aws_nodeconfigs.yaml
var CRD []byte

var admission = sync.OnceValues(func() (*crdadmission.Admission, error) {
	crd, err := Published()
	if err != nil {
		return nil, err
	}
	relaxRawExtensions(&crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties)
	return crdadmission.New(crd)
})

// Published is the CRD as nodeadm publishes it.
func Published() (*apiextensionsv1.CustomResourceDefinition, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(CRD, crd); err != nil {
		return nil, fmt.Errorf("reading nodeadm's NodeConfig CRD: %w", err)
	}
	return crd, nil
}

// relaxRawExtensions lets the values of maps of runtime.RawExtension
// (kubelet.config, containerd.baseRuntimeSpec) be any JSON, as nodeadm
// decodes them: controller-gen declares such a value `type: object`, which
// would refuse `maxPods: 58`, the very shape nodeadm's own end-to-end cases
// write (see TestThePublishedSchemaRefusesNodeadmsOwnCases).
func relaxRawExtensions(props *map[string]apiextensionsv1.JSONSchemaProps) {
	for name, p := range *props {
		if ap := p.AdditionalProperties; ap != nil && ap.Schema != nil && ap.Schema.XPreserveUnknownFields != nil &&
			*ap.Schema.XPreserveUnknownFields && ap.Schema.Type == "object" && len(ap.Schema.Properties) == 0 {
			ap.Schema.Type = ""
		}
		relaxRawExtensions(&p.Properties)
		(*props)[name] = p
	}
}

// CheckNodeConfig returns what nodeadm's schema finds in one NodeConfig document
// (YAML or JSON): each validation error and each field its pruning drops,
// joined; nil when the document is one nodeadm reads whole.
func CheckNodeConfig(doc []byte) error {
	a, err := admission()
	if err != nil {
		return err
	}
	var obj map[string]any
	if err := yaml.Unmarshal(doc, &obj); err != nil {
		return fmt.Errorf("the NodeConfig is not YAML: %w", err)
	}
	if obj["apiVersion"] != "node.eks.aws/v1alpha1" || obj["kind"] != "NodeConfig" {
		return fmt.Errorf("the document is %v %v, not a node.eks.aws/v1alpha1 NodeConfig", obj["apiVersion"], obj["kind"])
	}
	var errs []error
	for _, e := range a.Validate(context.Background(), obj) {
		errs = append(errs, e)
	}
	if unknown := a.Unknown(obj); len(unknown) > 0 {
		errs = append(errs, fmt.Errorf("fields nodeadm's schema does not declare (its decoder drops them): %s", strings.Join(unknown, ", ")))
	}
	return errors.Join(errs...)
}
