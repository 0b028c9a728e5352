// Package manifesttest checks the shape of the errors a manifest reader
// returns, for the readers' tests and fuzz targets.
package manifesttest

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stowage-dev/stowage/controller/manifest"
)

// CheckErrors fails t unless every error err holds (joined or wrapped) is a
// manifest.Error on a line of input that says what is wrong, and names the
// field when it is about an object; allowed lists errors that may stand
// alone (an empty file, a missing document).
func CheckErrors(t testing.TB, input []byte, err error, allowed ...error) {
	t.Helper()
	lines := bytes.Count(input, []byte("\n")) + 1
	leaves := manifest.Leaves(err)
	if len(leaves) == 0 {
		t.Fatalf("error %v holds no error", err)
	}
	for _, e := range leaves {
		var me *manifest.Error
		switch {
		case errors.As(e, &me):
			if me.Line < 1 || me.Line > lines {
				t.Errorf("error %q is on line %d of a %d-line input", me, me.Line, lines)
			}
			if me.Detail == "" {
				t.Errorf("error %q says nothing", me)
			}
			if me.Object != "" && me.Field == "" {
				t.Errorf("error %q about an object names no field", me)
			}
		case !isAllowed(e, allowed):
			t.Errorf("error %q (%T) is not placed on a line", e, e)
		}
	}
}

func isAllowed(err error, allowed []error) bool {
	for _, a := range allowed {
		if errors.Is(err, a) {
			return true
		}
	}
	return false
}
