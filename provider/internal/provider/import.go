package provider

import (
	"bytes"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// writtenFields reports, for a JSON path of field names, whether a field
// manager wrote the field or something under it (its managedFields), as
// opposed to the API server's defaulting, which nobody owns.
func writtenFields(obj *unstructured.Unstructured) func(path []string) bool {
	written := map[string]bool{}
	for _, mf := range obj.GetManagedFields() {
		if mf.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(bytes.NewReader(mf.FieldsV1.GetRawBytes())); err != nil {
			continue
		}
		set.Iterate(func(p fieldpath.Path) {
			var names []string
			for _, pe := range p {
				if pe.FieldName == nil {
					break
				}
				names = append(names, *pe.FieldName)
				written[strings.Join(names, ".")] = true
			}
		})
	}
	return func(path []string) bool { return written[strings.Join(path, ".")] }
}
