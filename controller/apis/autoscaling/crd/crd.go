// Package crd embeds the CapacityBuffer and ProvisioningRequest CRDs of
// autoscaling.x-k8s.io as Cluster Autoscaler publishes them (README.md
// names the commit).
package crd

import (
	_ "embed" // the CRDs
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// Name is the CapacityBuffer CRD's name.
const Name = "capacitybuffers.autoscaling.x-k8s.io"

// ProvisioningRequestName is the ProvisioningRequest CRD's name.
const ProvisioningRequestName = "provisioningrequests.autoscaling.x-k8s.io"

var (
	//go:embed autoscaling.x-k8s.io_capacitybuffers.yaml
	raw []byte
	//go:embed autoscaling.x-k8s.io_provisioningrequests.yaml
	rawProvisioningRequests []byte
)

// Raw is the CapacityBuffer CRD's file as published.
func Raw() []byte { return raw }

// RawProvisioningRequest is the ProvisioningRequest CRD's file as published.
func RawProvisioningRequest() []byte { return rawProvisioningRequests }

// CapacityBuffer returns the CRD, freshly parsed (strictly) on every call so
// that callers may change it.
func CapacityBuffer() (*apiextensionsv1.CustomResourceDefinition, error) {
	return parse("CapacityBuffer", raw)
}

// ProvisioningRequest returns the ProvisioningRequest CRD, freshly parsed
// (strictly) on every call so that callers may change it.
func ProvisioningRequest() (*apiextensionsv1.CustomResourceDefinition, error) {
	return parse("ProvisioningRequest", rawProvisioningRequests)
}

// Shared are the CRDs Stowage shares with other autoscalers, freshly parsed.
func Shared() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	buffers, err := CapacityBuffer()
	if err != nil {
		return nil, err
	}
	requests, err := ProvisioningRequest()
	if err != nil {
		return nil, err
	}
	return []*apiextensionsv1.CustomResourceDefinition{buffers, requests}, nil
}

func parse(kind string, b []byte) (*apiextensionsv1.CustomResourceDefinition, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(b, crd); err != nil {
		return nil, fmt.Errorf("parsing the %s CRD: %w", kind, err)
	}
	return crd, nil
}

// MustCapacityBuffer is CapacityBuffer for callers that cannot go on without
// it; this package's tests parse the file, so it panics only on a broken build.
func MustCapacityBuffer() *apiextensionsv1.CustomResourceDefinition {
	return must(CapacityBuffer())
}

// MustProvisioningRequest is ProvisioningRequest for callers that cannot go
// on without it.
func MustProvisioningRequest() *apiextensionsv1.CustomResourceDefinition {
	return must(ProvisioningRequest())
}

func must(crd *apiextensionsv1.CustomResourceDefinition, err error) *apiextensionsv1.CustomResourceDefinition {
	if err != nil {
		panic(err)
	}
	return crd
}
