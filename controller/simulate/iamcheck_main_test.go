package simulate_test

import (
	"os"
	"testing"

	"github.com/stowage-dev/stowage/internal/iamcheck"
)

// TestMain has iam-simulate vote on every authorization the package's
// emulators decide.
func TestMain(m *testing.M) { os.Exit(iamcheck.Main(m)) }
