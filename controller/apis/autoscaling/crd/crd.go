// Package crd embeds the CapacityBuffer CRD of autoscaling.x-k8s.io as
// Cluster Autoscaler publishes it (README.md names the commit).
package crd

import (
	_ "embed" // the CRD
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// Name is the CRD's name.
const Name = "capacitybuffers.autoscaling.x-k8s.io"

//go:embed autoscaling.x-k8s.io_capacitybuffers.yaml
var raw []byte

// Raw is the CRD's file as published.
func Raw() []byte { return raw }

// CapacityBuffer returns the CRD, freshly parsed (strictly) on every call so
// that callers may change it.
func CapacityBuffer() (*apiextensionsv1.CustomResourceDefinition, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(raw, crd); err != nil {
		return nil, fmt.Errorf("parsing the CapacityBuffer CRD: %w", err)
	}
	return crd, nil
}

// MustCapacityBuffer is CapacityBuffer for callers that cannot go on without
// it; this package's tests parse the file, so it panics only on a broken build.
func MustCapacityBuffer() *apiextensionsv1.CustomResourceDefinition {
	crd, err := CapacityBuffer()
	if err != nil {
		panic(err)
	}
	return crd
}
