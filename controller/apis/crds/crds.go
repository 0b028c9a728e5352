// Package crds embeds the CustomResourceDefinitions of Stowage's API types, which
// controller-gen writes into this folder from the markers in ../v1alpha1 (`make
// generate`). The controller installs them and tests start API servers with them.
//
// Every *.yaml file here is generated: edit the markers, not the YAML.
package crds

import (
	"bufio"
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

//go:embed *.yaml
var files embed.FS

// CRDs returns the CRDs, freshly parsed on every call so that callers may change
// them, in file-name order. Parsing is strict: an unknown or duplicated field, or a
// file holding other than one CustomResourceDefinition, is an error.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	names, err := fs.Glob(files, "*.yaml")
	if err != nil {
		return nil, fmt.Errorf("listing the embedded CRDs: %w", err)
	}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(names))
	for _, name := range names {
		crd, err := parseFile(name)
		if err != nil {
			return nil, err
		}
		crds = append(crds, crd)
	}
	return crds, nil
}

// MustCRDs is CRDs for callers that cannot go on without them; the embedded files are
// checked by this package's tests, so it panics only on a broken build.
func MustCRDs() []*apiextensionsv1.CustomResourceDefinition {
	crds, err := CRDs()
	if err != nil {
		panic(err)
	}
	return crds
}

func parseFile(name string) (*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := files.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	doc, err := singleDocument(data)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(doc, crd); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", name, err)
	}
	want := apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition")
	if got := crd.GroupVersionKind(); got != want {
		return nil, fmt.Errorf("parsing %s: holds a %s, want a %s", name, got, want)
	}
	return crd, nil
}

// singleDocument returns the one YAML document in data, skipping empty ones.
func singleDocument(data []byte) ([]byte, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(doc)) > 0 {
			docs = append(docs, doc)
		}
	}
	if len(docs) != 1 {
		return nil, fmt.Errorf("holds %d YAML documents, want exactly one CustomResourceDefinition", len(docs))
	}
	return docs[0], nil
}
