package deploy

import (
	"strings"
	"testing"
)

func TestDecodeIsStrict(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"unknown field", "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: a\nautomountToken: true\n", "unknown field"},
		{"duplicate field", "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: a\nmetadata:\n  name: b\n", "already set"},
		{"unknown kind", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: a\n", "no kind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decode([]byte("---\n# comment only\n---\n" + tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "document 2") {
				t.Errorf("decode() error = %v, want one naming document 2 and containing %q", err, tc.want)
			}
		})
	}
	objs, err := decode([]byte("---\n# comment only\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: a\n"))
	if err != nil || len(objs) != 1 || objs[0].GetName() != "a" {
		t.Errorf("decode() = %v, %v; want the one ServiceAccount", objs, err)
	}
}
