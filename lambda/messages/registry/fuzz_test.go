package registry_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"testing"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/lambda/messages"
	"github.com/stowage-dev/stowage/lambda/messages/registry"
)

var instanceID = regexp.MustCompile(`^i-([0-9a-f]{8}|[0-9a-f]{17})$`)

// FuzzParse feeds the registry arbitrary bodies, starting from every sample
// in testdata (and the corpus in testdata/fuzz/FuzzParse): it must never
// panic, must answer the same twice, and must either fail with an error that
// names a field (or an unknown event), or return a message whose kind is
// known, whose event id is set and whose instances are all instance ids.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob(filepath.Join(testdata, "*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no samples in %s (%v)", testdata, err)
	}
	for _, path := range files {
		body, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body)
	}
	r := registry.New()
	f.Fuzz(func(t *testing.T, body []byte) {
		msg, err := r.Parse(body)
		again, err2 := r.Parse(body)
		if !reflect.DeepEqual(msg, again) || (err == nil) != (err2 == nil) {
			t.Fatalf("two parses differ: %+v (%v) and %+v (%v)", msg, err, again, err2)
		}
		if err != nil {
			var fe *messages.FieldError
			if !messages.IsUnknown(err) && (!errors.As(err, &fe) || fe.Field == "" || fe.Problem == "") {
				t.Fatalf("error %v (%T) names no field", err, err)
			}
			return
		}
		if msg.EventID == "" || (msg.Kind != "" && !slices.Contains(v1alpha1.InterruptionKinds, msg.Kind)) {
			t.Fatalf("message %+v: no event id, or an unknown kind", msg)
		}
		if msg.Kind == "" && msg.Reason == "" {
			t.Fatalf("message %+v asks for nothing and says no reason", msg)
		}
		for _, id := range msg.InstanceIDs {
			if !instanceID.MatchString(id) {
				t.Fatalf("message %+v names %q, not an instance id", msg, id)
			}
		}
	})
}
