package charttest

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stowage-dev/stowage/internal/iamcheck"
)

// TestMain has iam-simulate vote on every authorization the package's
// emulators decide; the bed's clients log nothing through controller-runtime.
func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	os.Exit(iamcheck.Main(m))
}
